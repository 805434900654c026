# The kernel log's plumbing: the nvgpu line format, /dev/kmsg record semantics through the seam, the GR-init warning, children.
import errno, os, pathlib, subprocess, sys, tempfile
import pytest
from orin_emu.kernel.klog import nvgpu_line
from tegra_conformance.tegra import F, SEED_END, kernel_log

def test_nvgpu_line_format():
  assert nvgpu_line("gk20a_channel_ioctl", 7, "ERR", "x" * 200) == "nvgpu: 17000000.gpu " + " " * 14 + "gk20a_channel_ioctl:7    [ERR]  " + "x" * 159

def test_kmsg_reads_records_and_eagain(k):
  f = F("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
  first = f.read(binary=True).decode().splitlines()
  assert first[0].startswith("6,0,") and first[0].endswith(";" + nvgpu_line("nvgpu_nvhost_syncpt_init", 122, "INFO",
                                                                 "syncpt_unit_base 60000000 syncpt_unit_size 4000000 size 10000"))
  assert f.read(binary=True) is None   # nothing new: EAGAIN, as a non-blocking /dev/kmsg
  k.klog.nvgpu("f", 1, "WRN", "hello")
  assert f.read(binary=True).decode().split(";", 1)[1] == nvgpu_line("f", 1, "WRN", "hello") + "\n"
  f.seek(0)
  assert f.read(binary=True).decode().splitlines()[0] == first[0]
  with pytest.raises(OSError) as e: f.seek(5)
  assert e.value.errno == errno.ESPIPE

def test_kmsg_write_adds_a_user_record(k):
  new = kernel_log()
  F("/dev/kmsg", os.O_WRONLY).write("<6>test marker\n")
  assert new() == [(6, "test marker")]

def test_gr_context_init_warns_once_per_tsg_when_the_rtv_buffer_lands_past_2_40(k, orin):
  # the seed's address space put the RTV buffer at 2^40 (orin_emu/tests/test_kernel_vma.py); TegraIface's keeps it below
  new = kernel_log()
  orin.bring_up(end=SEED_END)
  lines = [t for _, t in new()]
  assert sum("tu104_gr_init_commit_rtv_cb" in t and t.startswith("WARNING: CPU:") for t in lines) == 1
  orin.bring_up()
  assert not any("tu104_gr_init_commit_rtv_cb" in t for _, t in new())

def test_children_log_to_the_same_kernel_log(k):
  new = kernel_log()
  code = "import orin_emu.kernel as K; K.kernel().klog.nvgpu('child', 1, 'ERR', 'from a child')"
  env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(pathlib.Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")])}
  subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
  assert (3, nvgpu_line("child", 1, "ERR", "from a child")) in new()

def test_a_killed_owners_log_is_removed_when_the_next_emulated_orin_boots():
  # the owner removes its log at exit; one killed (SIGKILL, a timeout) never does, so the next machine to boot removes it
  code = "import sys, orin_emu.kernel as K; print(K.kernel().klog.path, flush=True); sys.stdin.read()"
  env = {k: v for k, v in os.environ.items() if k != "ORIN_EMU_KMSG"}   # each child boots its own machine with its own log
  env["PYTHONPATH"] = os.pathsep.join([str(pathlib.Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")])
  killed = subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
  stale = pathlib.Path(killed.stdout.readline().strip())
  killed.kill(); killed.wait()
  fd, live = tempfile.mkstemp(prefix=f"orin-emu-kmsg-{os.getpid()}-", suffix=".log")   # a live owner's log stays
  os.close(fd)
  try:
    assert stale.exists()
    out = subprocess.run([sys.executable, "-c", code], env=env, input="", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-3000:]
    assert not stale.exists() and os.path.exists(live) and not os.path.exists(out.stdout.strip())
  finally: os.unlink(live); stale.unlink(missing_ok=True)

# Resources with the kernel's lifetimes, and the counts that make leaks visible.
import ctypes, os, pytest
from orin_emu.kernel import KernelError
import tinygrad.runtime.support.hcq as hcq
from tegra_conformance.tegra import PAGE

def test_alloc_free_cycles_leave_nothing(k, orin):
  as_ = orin.alloc_as(windows=True)
  base = k.counts()
  for _ in range(1000):
    h, buf = orin.buffer(16 << 10)
    va = orin.map(as_, buf)
    p = orin.cpu_map(buf, 16 << 10)
    orin.unmap(as_, va); hcq.FileIOInterface.munmap(p, 16 << 10)
    del buf
    orin.free(h)
  assert k.counts() == base

def test_closing_nvmap_client_frees_its_handles(k, orin):
  for _ in range(3): orin.alloc(orin.create(PAGE))
  assert k.counts()["handles"] == 3 and k.counts()["dram_bytes"] == 3 * PAGE
  orin.nvmap = None
  assert k.counts()["handles"] == 0 and k.counts()["dram_bytes"] == 0

def test_dmabuf_and_mapping_hold_memory_after_free(k, orin):
  as_ = orin.alloc_as()
  h, buf = orin.buffer(PAGE)
  va = orin.map(as_, buf)
  orin.free(h)
  assert k.counts()["buffers"] == 1 and k.counts()["handles"] == 0
  del buf
  assert k.counts()["buffers"] == 1   # the GPU mapping still holds it
  orin.unmap(as_, va)
  assert k.counts()["buffers"] == 0 and k.counts()["dram_bytes"] == 0

def test_cpu_mapping_holds_memory_until_munmap(k, orin):
  h, buf = orin.buffer(PAGE)
  p = orin.cpu_map(buf, PAGE)
  del buf
  orin.free(h)
  assert k.counts()["zombies"] == 1 and k.counts()["dram_bytes"] == PAGE
  hcq.FileIOInterface.munmap(p, PAGE)
  assert k.counts()["zombies"] == 0 and k.counts()["dram_bytes"] == 0

def test_closing_as_fd_unmaps_but_bound_channel_keeps_vm(k, orin):
  as_ = orin.alloc_as()
  ch = orin.open_channel()
  orin.bind_as(as_, ch)
  orin.map(as_, orin.buffer(PAGE)[1])
  del as_
  assert k.counts()["vms"] == 1 and k.counts()["gpu_mappings"] == 1   # the channel holds the VM
  del ch
  assert k.counts()["vms"] == 0 and k.counts()["gpu_mappings"] == 0 and k.counts()["buffers"] == 1   # the handle is still there

def test_channel_close_frees_channel_and_pins(k, orin):
  as_, tsg, veid, c0, c1 = orin.bring_up()
  assert k.counts()["channels"] == 2 and k.counts()["tsgs"] == 1
  orin.keep.clear()
  assert k.counts()["fds"].get("dmabuf", 0) == 0 and k.counts()["buffers"] == 4   # ring and USERD pinned by the channels
  del c0, c1
  assert k.counts()["channels"] == 0 and k.counts()["tsgs"] == 1   # the TSG fd still holds the TSG
  del as_, tsg
  assert k.counts()["channels"] == 0 and k.counts()["tsgs"] == 0 and k.counts()["buffers"] == 4   # the nvmap handles remain
  orin.nvmap = None
  assert k.counts()["buffers"] == 0

def test_freed_channel_ids_go_to_the_tail(k, orin):
  as_, tsg = orin.alloc_as(), orin.open_tsg()
  veid = orin.subcontext(tsg, as_)
  first, sb, *_ = orin.channel(as_, tsg, veid)
  assert sb.work_submit_token == 511   # the first channel of a fresh machine, as observed
  del first
  _, sb, *_ = orin.channel(as_, tsg, veid)
  assert sb.work_submit_token == 510

def test_os_close_behind_the_seams_back_releases(k, orin):
  h, buf = orin.buffer(PAGE)
  fd = buf.fd
  os.close(fd)
  buf.fd = os.open("/dev/null", os.O_RDONLY)   # the number may come back as an unrelated file
  orin.free(h)
  assert k.counts()["buffers"] == 0 and k.counts()["fds"].get("dmabuf", 0) == 0
  with pytest.raises(KernelError): k.dmabuf(fd)

def test_gpu_view_aliases_cpu_mappings(k, orin):
  as_ = orin.alloc_as()
  h, buf = orin.buffer(3 * PAGE)
  va = orin.map(as_, buf)
  p = orin.cpu_map(buf, 3 * PAGE)
  base, view = k.vms.copy().pop().mem.lookup(va + 2 * PAGE + 7)
  assert base == va and len(view) == 3 * PAGE
  ctypes.memmove(p + 2 * PAGE + 7, b"gpu", 3)
  assert bytes(view[2 * PAGE + 7:2 * PAGE + 10]) == b"gpu"
  view[0] = 0x5A
  assert ctypes.string_at(p, 1) == b"\x5a"
  hcq.FileIOInterface.munmap(p, 3 * PAGE)

def test_unmapped_va_faults(k, orin):
  from orin_emu.faults import MMUFault
  as_ = orin.alloc_as()
  va = orin.map(as_, orin.buffer(PAGE)[1])
  mem = k.vms.copy().pop().mem
  try: mem.lookup(va + PAGE); raise AssertionError("no fault")
  except MMUFault as f: assert f.va == va + PAGE
  orin.unmap(as_, va)
  try: mem.lookup(va); raise AssertionError("no fault after unmap")
  except MMUFault: pass

def test_dram_exhaustion_and_reaping_of_unmapped_zombies():
  from orin_emu.kernel import reset
  from orin_emu.kernel.memory import libc
  from tegra_conformance.tegra import Orin, errno_of
  reset(dram_size=4 * PAGE)
  try:
    o = Orin()
    h = o.create(4 * PAGE); o.alloc(h)
    assert errno_of(lambda: o.alloc(o.create(PAGE))) == 12   # ENOMEM: the emulated DRAM is full
    p = o.cpu_map(o.get_fd(h), 4 * PAGE)
    o.free(h)
    assert errno_of(lambda: o.alloc(o.create(PAGE))) == 12   # the CPU mapping still holds the memory
    libc.munmap(p, 4 * PAGE)                                  # unmapped behind the seam's back
    o.alloc(o.create(4 * PAGE))                               # found out when memory runs short
    o.close()
  finally: reset()

#!/usr/bin/env python3
"""GPU messages of the kernel log: what the Tegra suites check around every test, and a command for a Jetson.

  python tests/tegra/klog.py            recent nvgpu/nvmap messages, errors marked
  python tests/tegra/klog.py --watch    follow new ones (Ctrl-C to stop)
Reads /dev/kmsg (root, or kernel.dmesg_restrict=0); under ORIN_EMU=1 the emulated Orin's log."""
import os, re, sys, time

GPU = re.compile(r"nvgpu|nvmap|\[MMU FAULT\]")
# errors: nvgpu's [ERR] level, GPU faults, nvmap complaints, and the GR-context WARNING of an RTV buffer past 2^40
# (tu104_gr_init_commit_rtv_cb): the address space ends too high for the kernel's own mappings (docs/tegra-address-space.md).
ERROR = re.compile(r"\[ERR\]|\[MMU FAULT\]|machine check|sked exception|hww_warp_esr|nvmap: .*(WARNING|error|fail)|tu104_gr_init_commit_rtv_cb", re.I)

def read_log() -> list[str]:
  if os.environ.get("ORIN_EMU") == "1":
    from orin_emu.kernel import kernel
    return kernel().klog.lines()
  fd, lines = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK), []
  try:
    while True: lines.append(os.read(fd, 8192).decode(errors="replace").split(";", 1)[-1].rstrip("\n"))
  except BlockingIOError: pass
  finally: os.close(fd)
  return lines

def gpu_errors(lines:list[str]) -> list[str]: return [ln for ln in lines if GPU.search(ln) and ERROR.search(ln)]

def main(argv:list[str]) -> int:
  seen = 0
  while True:
    lines = read_log()
    for ln in (ln for ln in lines[seen:] if GPU.search(ln)): print(("ERROR " if ERROR.search(ln) else "      ") + ln)
    seen = len(lines)
    if "--watch" not in argv: return 1 if gpu_errors(lines) else 0
    time.sleep(1)

if __name__ == "__main__": sys.exit(main(sys.argv[1:]))

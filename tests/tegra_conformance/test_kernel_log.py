# The driver's log lines, read from /dev/kmsg the way dmesg reads it (tegra-facts.md §8).
import re
import pytest
from tegra_conformance.tegra import WC, PAGE, kernel_log, errno_of
from orin_emu.kernel.uapi import IOC

NVGPU = re.compile(r"^nvgpu: 17000000\.gpu (?P<func>[ \w]{33,}):(?P<line>\d+ *) \[(?P<lvl>ERR|WRN|INFO|DBG)\]  (?P<msg>.*)$")

@pytest.fixture
def klog():
  try: return kernel_log()
  except PermissionError: pytest.skip("reading /dev/kmsg needs root or kernel.dmesg_restrict=0")

def test_setup_error_is_logged_in_nvgpu_format(orin, klog):
  ch = orin.open_channel()
  (_, ring), (_, userd) = orin.buffer(8192, WC), orin.buffer(PAGE, WC)
  assert errno_of(lambda: orin.setup_bind(ch, userd, ring)) == 22
  (prio, line), = [r for r in klog() if "nvgpu" in r[1]]
  m = NVGPU.match(line)
  assert prio == 3 and m and m["lvl"] == "ERR" and m["msg"] == "not bound to an address space at time of setup_bind"   # function: 33 columns

def test_missing_nvmap_tag_warns_once_per_client(orin, klog):
  orin.alloc(orin.create(PAGE), tag=0)
  orin.alloc(orin.create(PAGE), tag=0)
  warn = [t for _, t in klog() if "All NvMap Allocations must have a tag" in t]
  assert len(warn) == 1 and re.match(r"^nvmap: \w+\(\) PID \d+: .+: WARNING: ", warn[0])
  orin.alloc(orin.create(PAGE))
  assert not klog()

def test_unknown_nvmap_ioctl_is_warned(orin, klog):
  assert errno_of(lambda: orin.nvmap.ioctl(IOC(3, ord("N"), 99, 8), bytearray(8))) == 25
  assert (4, f"nvmap: nvmap_ioctl() Unknown NVMAP_IOC = 0x{IOC(3, ord('N'), 99, 8):x}") in klog()

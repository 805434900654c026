# The driver's log lines, read from /dev/kmsg the way dmesg reads it: nvgpu's format is os/linux/log.c's, nvmap's each file's pr_fmt.
import mmap, re
import pytest
import tinygrad.runtime.support.hcq as hcq
from tegra_conformance.tegra import WC, PAGE, kernel_log, errno_of
from orin_emu.kernel.uapi import IOC, consts as C

NVGPU = re.compile(r"^nvgpu: 17000000\.gpu (?P<func>[ \w]{33,}):(?P<line>\d+ *) \[(?P<lvl>ERR|WRN|INFO|DBG)\]  (?P<msg>.*)$")

@pytest.fixture
def klog():
  try: return kernel_log()
  except PermissionError: pytest.skip("reading /dev/kmsg needs root or kernel.dmesg_restrict=0")

def test_setup_error_is_logged_in_nvgpu_format(orin, klog):
  ch = orin.open_channel()
  (_, ring), (_, userd) = orin.buffer(8192, WC), orin.buffer(PAGE, WC)
  assert errno_of(lambda: orin.setup_bind(ch, userd, ring)) == 22
  lines = [(prio, NVGPU.match(line)) for prio, line in klog() if "nvgpu" in line]
  assert [(prio, m["lvl"], m["func"].strip(), m["msg"]) for prio, m in lines] == [   # channel.c: each precheck failure, then "fail"
    (3, "ERR", "channel_setup_bind_prechecks", "not bound to an address space at time of setup_bind"), (3, "ERR", "nvgpu_channel_setup_bind", "fail")]

def test_missing_nvmap_tag_warns_once_per_client(orin, klog):
  orin.alloc(orin.create(PAGE), tag=0)
  orin.alloc(orin.create(PAGE), tag=0)
  warn = [t for _, t in klog() if "All NvMap Allocations must have a tag" in t]
  assert len(warn) == 1 and re.match(r"^nvmap_alloc_handle: PID \d+: .+: WARNING: ", warn[0])   # nvmap_alloc.c's pr_fmt
  orin.alloc(orin.create(PAGE))
  assert not klog()

def test_unknown_nvmap_ioctl_is_warned(orin, klog):
  assert errno_of(lambda: orin.nvmap.ioctl(IOC(3, ord("N"), 99, 8), bytearray(8))) == 25
  assert (4, f"Unknown NVMAP_IOC = 0x{IOC(3, ord('N'), 99, 8):x}") in klog()   # nvmap_dev.c has no pr_fmt

def nvgpu_lines(records) -> list[tuple[int, str, str, str]]:
  return [(prio, m["lvl"], m["func"].strip(), m["msg"]) for prio, line in records if (m:=NVGPU.match(line))]

def test_handler_failures_log_the_check_then_the_caller(orin, klog):
  # gr_setup.c nvgpu_gr_setup_alloc_obj_ctx and os/linux/vm.c nvgpu_vm_map_buffer log the failing check, then their own line;
  # ioctl_tsg.c logs the subcontext type it refused
  as_, tsg, veid, ch = orin.tsg_channel()
  orin.bind_as(as_, ch)
  assert errno_of(lambda: orin.alloc_obj(ch, 0xC6C0)) == 22
  assert errno_of(lambda: orin.subcontext(tsg, as_, typ=7)) == 22
  assert errno_of(lambda: orin.map(as_, orin.buffer(PAGE)[1], flags=3 << 10)) == 22
  assert errno_of(lambda: orin.bind_tsg(tsg, ch, veid + 1)) == 22
  assert nvgpu_lines(klog()) == [
    (3, "ERR", "nvgpu_gr_setup_validate_channel_and_class", "invalid obj class 0xc6c0"), (3, "ERR", "nvgpu_gr_setup_alloc_obj_ctx", "fail"),
    (3, "ERR", "nvgpu_tsg_ioctl_create_subcontext", "Invalid subcontext type 7"),
    (3, "ERR", "nvgpu_vm_translate_map_access", "Invalid map access specified 3"), (3, "ERR", "nvgpu_vm_map_buffer", "map access translation failed"),
    (3, "ERR", "nvgpu_tsg_validate_ch_subctx_vm", "channel VM does not match with subcontext VM"),
    (3, "ERR", "gk20a_tsg_ioctl_bind_channel_ex", "channel/subctx VM mismatch")]

def test_unmapping_a_fixed_mapping_still_mapped_twice_warns(orin, klog):
  # common/mm/vm.c nvgpu_vm_unmap: after nvgpu_vm_unmap_sync_buffer's 100 ms wait, the remaining references are reported
  as_ = orin.alloc_as()
  orin.alloc_space(as_, 1 << 20, 0x100000000)
  _, buf = orin.buffer(PAGE)
  fixed = C.NVGPU_AS_MAP_BUFFER_FLAGS_FIXED_OFFSET
  orin.map(as_, buf, fixed, 0x100000000); orin.map(as_, buf, fixed, 0x100000000)
  orin.unmap(as_, 0x100000000)
  assert nvgpu_lines(klog()) == [(4, "WRN", "nvgpu_vm_unmap", "2 references remaining on 0x100000000")]

def test_from_va_pin_failure_is_logged(orin, klog):
  # nvmap_priv.h nvmap_get_user_pages and nvmap_alloc.c nvmap_alloc_handle_from_va (pr_fmt "<function>: ")
  p = hcq.FileIOInterface.anon_mmap(0, 2 * PAGE, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, 0)
  hcq.FileIOInterface.munmap(p + PAGE, PAGE)
  assert errno_of(lambda: orin.from_va(p, 2 * PAGE, tag=0)) == 22
  hcq.FileIOInterface.munmap(p, PAGE)
  lines = [(prio, re.sub(r"PID \d+: .+: WARNING: All NvMap.*", "PID: WARNING", ln)) for prio, ln in klog() if "nvmap" in ln or "get_user_pages" in ln]
  assert lines == [
    (3, "nvmap_alloc_handle_from_va: PID: WARNING"),   # an untagged call warns before it pins
    (3, "nvmap_get_user_pages: get_user_pages requested/got: 2/1]"), (3, "nvmap_alloc_handle_from_va: alloc_handle_from_va failed -12")]

def test_uncached_cpu_mapping_warns_once_as_an_error(orin, klog):
  # nvmap_priv.h nvmap_pgprot: pr_err, once per client, with the handle's tag
  _, buf = orin.buffer(PAGE, cache=0)
  p = orin.cpu_map(buf, PAGE)
  warn = [r for r in klog() if "NVMAP_HANDLE_UNCACHEABLE" in r[1]]
  assert len(warn) == 1 and warn[0][0] == 3 and re.match(r"^nvmap: nvmap_pgprot\(\) PID \d+: .+: TAG: 0x0900 WARNING: ", warn[0][1])
  hcq.FileIOInterface.munmap(p, PAGE)

def test_deprecated_compbits_flag_is_ignored_with_a_warning(orin, klog):
  # os/linux/vm.c nvgpu_vm_translate_linux_flags
  orin.map(orin.alloc_as(), orin.buffer(PAGE)[1], flags=C.NVGPU_AS_MAP_BUFFER_FLAGS_MAPPABLE_COMPBITS)
  assert nvgpu_lines(klog()) == [(4, "WRN", "nvgpu_vm_translate_linux_flags",
                                  "Ignoring deprecated flag: NVGPU_AS_MAP_BUFFER_FLAGS_MAPPABLE_COMPBITS")]

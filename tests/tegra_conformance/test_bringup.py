# Bringing up the ga10b by hand, as TegraIface will: characteristics, AS and window reservations, TSG, subcontext, channels, objects.
import ctypes, mmap, os
import tinygrad.runtime.support.hcq as hcq
from tegra_conformance.tegra import F, CTRL, PAGE, errno_of
from orin_emu.kernel.uapi import UAPI, structs as S, ioctls as I, gpu_flags

OBS = UAPI["observed_ga10b_characteristics_decode"]
def val(v): return int(v, 16) if isinstance(v, str) else v

def test_characteristics_are_ga10b(orin):
  c, r = orin.characteristics()
  assert r.gpu_characteristics_buf_size == 328
  for name in ("arch", "impl", "rev", "num_gpc", "num_tpc_per_gpc", "compute_class", "gpfifo_class", "dma_copy_class", "sm_arch_sm_version",
               "sm_arch_warp_count", "gpu_va_bit_count", "big_page_size", "available_big_page_sizes", "L2_cache_size", "flags", "bus_type"):
    assert getattr(c, name) == val(OBS[name]), name
  assert bytes(c.chipname).rstrip(b"\0") == b"ga10b" and c.max_gpfifo_entries == 1 << 28
  assert all(c.flags >> gpu_flags[f] & 1 for f in OBS["flags_set"]) and not any(c.flags >> gpu_flags[f] & 1 for f in OBS["flags_clear"])

def test_characteristics_size_query_and_short_buffer(orin):
  _, r = orin.characteristics(size=0)
  assert r.gpu_characteristics_buf_size == 328   # size 0: just the size, nothing written
  c, r = orin.characteristics(size=8)
  assert (c.arch, c.impl, c.num_gpc) == (0x170, 0xB, 0) and r.gpu_characteristics_buf_size == 328   # only 8 bytes copied

def test_bring_up_two_channels(orin):
  as_, tsg, veid, (compute, sb0), (copy, sb1) = orin.bring_up()
  assert veid == 1
  for sb in (sb0, sb1):
    assert sb.work_submit_token >> 16 == 0 and sb.work_submit_token & 0xFFF < 512   # runlist 0, hardware channel id
    assert (sb.gpfifo_gpu_va, sb.userd_gpu_va, sb.usermode_mmio_gpu_va) == (0, 0, 0)
  assert sb0.work_submit_token != sb1.work_submit_token
  assert orin.alloc_obj(compute, 0xC7C0).obj_id == 0

def test_usermode_doorbell_page_once_per_ctrl_fd(orin):
  addr = orin.ctrl.mmap(0, 0x10000, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, 0)
  try: orin.ctrl.mmap(0, 0x1000, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, 0); raise AssertionError("second usermode mmap succeeded")
  except OSError as e: assert "Device or resource busy" in str(e)
  other = F(CTRL, os.O_RDWR | os.O_CLOEXEC)
  addr2 = other.mmap(0, 0x1000, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, 0)   # another ctrl fd has its own
  hcq.FileIOInterface.munmap(addr, 0x10000); hcq.FileIOInterface.munmap(addr2, 0x1000)
  addr = orin.ctrl.mmap(0, 0x1000, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, 0)   # unmapped: allowed again
  hcq.FileIOInterface.munmap(addr, 0x1000)

def test_usermode_mmap_rules(orin):
  for size, off in ((0x11000, 0), (0x1000, 0x1000)):
    try: orin.ctrl.mmap(0, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, off); raise AssertionError((size, off))
    except OSError as e: assert "Invalid argument" in str(e)

def test_nvmap_fd_cannot_be_mmapped(orin):
  try: orin.nvmap.mmap(0, PAGE, mmap.PROT_READ, mmap.MAP_SHARED, 0); raise AssertionError("mmap of /dev/nvmap succeeded")
  except OSError as e: assert "Operation not permitted" in str(e)

def test_get_tpc_masks(orin):
  c, _ = orin.characteristics()
  buf = (ctypes.c_uint32 * 8)()
  orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_GET_TPC_MASKS, a:=S.nvgpu_gpu_get_tpc_masks_args(mask_buf_size=32, mask_buf_addr=ctypes.addressof(buf)))
  assert a.mask_buf_size == 4 * c.max_gpc_count and buf[0] == (1 << c.num_tpc_per_gpc) - 1

def test_flush_l2(orin):
  orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_FLUSH_L2, S.nvgpu_gpu_l2_fb_args(l2_flush=1, fb_flush=1))
  for bad in (dict(), dict(l2_invalidate=1), dict(l2_invalidate=1, fb_flush=1)):
    assert errno_of(lambda: orin.ctrl.ioctl(I.NVGPU_GPU_IOCTL_FLUSH_L2, S.nvgpu_gpu_l2_fb_args(**bad))) == 22, bad

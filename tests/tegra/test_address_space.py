# TegraIface's GPU address space: nvgpu maps its own buffers (GPFIFO rings, GR context) right above va_range_end, and some of their
# consumers keep only 40 bits, so the address space must end at or below 0xFF00000000 (docs/tegra-address-space.md).
import pytest
from tegra_kernel import emu_kernel, run_child

def test_a_fresh_process_creates_the_gpu_context_and_computes():
  r = run_child("from tinygrad import Tensor; print((Tensor([1, 2], device='NV') + 1).tolist())")
  assert r.returncode == 0 and "[2, 3]" in r.stdout, r.stderr[-3000:]

def test_the_kernel_mappings_stay_below_2_40(dev):
  if (k:=emu_kernel()) is None: pytest.skip("needs the emulated kernel's view of the address space")
  vm = k.files[dev.iface.as_fd.fd].vm
  maps = vm.kernel_maps()
  assert vm.end <= 0xFF00000000 and {n for n, _, _ in maps} >= {"GPFIFO ring", "pagepool", "GR context image"}
  assert all(va + size <= 1 << 40 for _, va, size in maps), [(n, hex(va)) for n, va, _ in maps]

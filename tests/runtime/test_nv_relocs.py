# nv: ptxas moves 16-bit division into a helper (__cuda_sm20_div_s16) that the kernel calls with CALL.ABS.NOINC: the call target is an
# R_CUDA_ABS47_34 relocation, the return address two R_CUDA_ABS32_LO/HI_32 ones with an addend. Upstream this belongs in test/device/ (NV);
# here the mock NV GPU loads a cubin built by nvJitLink, as NVKIface and PCIIface load it.
import types
import tinygrad.runtime.ops_nv as ops_nv
from tinygrad import Device
from tinygrad.runtime.support.compiler_cuda import NVPTXCompiler
from tinygrad.runtime.support.elf import elf_loader

PTX = """.version 7.8
.target sm_87
.address_size 64
.visible .entry div16(.param .u64 p) {
  .reg .b16 %h<4>; .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;
  ld.global.s16 %h1, [%rd2]; ld.global.s16 %h2, [%rd2+2]; div.s16 %h3, %h1, %h2; st.global.s16 [%rd2], %h3; ret;
}"""

def test_call_abs_relocations(monkeypatch):
  dev, lib = Device["NV"], NVPTXCompiler("sm_87").compile(PTX)
  relocs = {typ:(off, sym+addend) for off, sym, typ, addend in elf_loader(lib)[2] if typ in (0x38, 0x39, 0x3a)}
  assert sorted(relocs) == [0x38, 0x39, 0x3a] and relocs[0x38][1] == relocs[0x39][1]
  monkeypatch.setattr(ops_nv, "MOCKIface", type("NoMock", (), {}))  # load the cubin, not the mock's PTX
  prg = ops_nv.NVProgram(dev, types.SimpleNamespace(lib=lib, name="div16", signature=(), profile_key=None))
  dev.allocator._copyout(img:=memoryview(bytearray(prg.lib_gpu.size)), prg.lib_gpu)
  word = lambda off, sz: int.from_bytes(img[off:off+sz], "little")
  assert (word(relocs[0x3a][0], 16) >> 34 & ((1 << 47) - 1)) << 2 == prg.lib_gpu.va_addr + relocs[0x3a][1]
  assert word(relocs[0x38][0] + 4, 4) | word(relocs[0x39][0] + 4, 4) << 32 == prg.lib_gpu.va_addr + relocs[0x38][1]

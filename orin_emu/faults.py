# GPU-side faults, raised by the room that detects them and turned by the kernel room into log lines and channel errors.
from dataclasses import dataclass

class GpuFault(Exception): pass

@dataclass
class MMUFault(GpuFault):
  va: int
  access: str = "virt read"   # hal/fb/fb_mmu_fault_gv11b_fusa.c access types
  fault_type: str = "invalid pte"   # hal/mm/mmu_fault/mmu_fault_ga10b_fusa.c fault types
  client: str = "gpc"
  def __str__(self): return f"MMU fault: {self.fault_type}, {self.access} at 0x{self.va:x}"

@dataclass
class SMException(GpuFault):
  warp_esr: int   # ga10b warp ESR code: 0xF misaligned address, 0x10 invalid address space, 0xE out-of-range address, ...
  va: int = 0
  pc: int = 0
  global_esr: int = 0x4
  detail: str = ""
  def __str__(self): return f"SM exception: hww_global_esr 0x{self.global_esr:x} hww_warp_esr 0x{self.warp_esr:x} at va 0x{self.va:x} {self.detail}".rstrip()

@dataclass
class ChannelError(GpuFault):
  msg: str
  def __str__(self): return f"channel error: {self.msg}"

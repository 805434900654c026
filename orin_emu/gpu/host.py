# Host (PBDMA) class methods 0x0..0xFF, valid on every subchannel: semaphores, WFI, memory ops, non-stall interrupts.
from tinygrad.runtime.autogen import nv_570 as nv
from orin_emu.faults import ChannelError
from orin_emu.gpu.sem import Stall, bits, acquire_ok, release, reduce

# SEM_EXECUTE fields (clc56f.h; the autogen keeps values, not bit ranges): OPERATION 2:0, ACQUIRE_SWITCH_TSG 12, RELEASE_WFI 20,
# PAYLOAD_SIZE 24, RELEASE_TIMESTAMP 25, REDUCTION 30:27, REDUCTION_FORMAT 31. Legacy SEMAPHORED: OPERATION 4:0, RELEASE_WFI 20,
# RELEASE_SIZE 24 (0 = 16 bytes with timestamp), REDUCTION 30:27, FORMAT 31.
SEM_ACQ = {nv.NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE: "eq", nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ: "strict_geq",
           nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ: "circ_geq", nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_AND: "and",
           nv.NVC56F_SEM_EXECUTE_OPERATION_ACQ_NOR: "nor"}
LEGACY_ACQ = {nv.NVC56F_SEMAPHORED_OPERATION_ACQUIRE: "eq", nv.NVC56F_SEMAPHORED_OPERATION_ACQ_GEQ: "strict_geq",
              nv.NVC56F_SEMAPHORED_OPERATION_ACQ_AND: "and"}
HOST_REDUCTION = ["min", "max", "xor", "and", "or", "add", "inc", "dec"]   # IMIN..DEC, SEM_EXECUTE_REDUCTION_* numbering
MEM_OPS = {v: k[len("NVC56F_MEM_OP_D_OPERATION_"):].lower() for k, v in vars(nv).items() if k.startswith("NVC56F_MEM_OP_D_OPERATION_")}
STORED = {nv.NVC56F_SEM_ADDR_LO, nv.NVC56F_SEM_ADDR_HI, nv.NVC56F_SEM_PAYLOAD_LO, nv.NVC56F_SEM_PAYLOAD_HI, nv.NVC56F_SEMAPHOREA,
          nv.NVC56F_SEMAPHOREB, nv.NVC56F_SEMAPHOREC, nv.NVC56F_MEM_OP_A, nv.NVC56F_MEM_OP_B, nv.NVC56F_MEM_OP_C}

class Host:
  def __init__(self, ch): self.ch, self.r = ch, {}

  def method(self, addr:int, data:int):
    r, gpu = self.r, self.ch.gpu
    if addr in STORED: r[addr] = data
    elif addr == nv.NVC56F_NOP: pass
    elif addr == nv.NVC56F_SEM_EXECUTE:
      va, size, payload = self.sem_operands(data)
      self.semaphore(va, bits(data, 2, 0), SEM_ACQ, nv.NVC56F_SEM_EXECUTE_OPERATION_RELEASE, nv.NVC56F_SEM_EXECUTE_OPERATION_REDUCTION,
                     payload, size, timestamp=bits(data, 25, 25), wfi=bits(data, 20, 20), red=bits(data, 30, 27), signed=not bits(data, 31, 31))
    elif addr == nv.NVC56F_SEMAPHORED:
      va = (r.get(nv.NVC56F_SEMAPHOREA, 0) & 0xff) << 32 | (r.get(nv.NVC56F_SEMAPHOREB, 0) & ~3 & 0xffffffff)
      self.semaphore(va, bits(data, 4, 0), LEGACY_ACQ, nv.NVC56F_SEMAPHORED_OPERATION_RELEASE, nv.NVC56F_SEMAPHORED_OPERATION_REDUCTION,
                     r.get(nv.NVC56F_SEMAPHOREC, 0), 4, timestamp=not bits(data, 24, 24), wfi=not bits(data, 20, 20), red=bits(data, 30, 27),
                     signed=not bits(data, 31, 31))
    elif addr == nv.NVC56F_NON_STALL_INTERRUPT: gpu.count("non_stall_interrupt")
    elif addr == nv.NVC56F_WFI: gpu.count("wfi")   # engines finish each method before the next, so the channel is already idle here
    elif addr == nv.NVC56F_SET_REFERENCE: self.ch.userd32[0x48 // 4] = data
    elif addr == nv.NVC56F_MEM_OP_D:
      if (op:=MEM_OPS.get(bits(data, 31, 27))) is None: raise ChannelError(f"MEM_OP_D unknown operation 0x{bits(data, 31, 27):x}")
      gpu.count(f"mem_op_{op}")
    else: raise ChannelError(f"illegal host method 0x{addr:03x} data 0x{data:08x}")

  def sem_operands(self, data:int) -> tuple[int, int, int]:
    """SEM_EXECUTE's address, payload size and payload from the SEM_ADDR/SEM_PAYLOAD registers"""
    r, size = self.r, 8 if bits(data, 24, 24) else 4
    va = (r.get(nv.NVC56F_SEM_ADDR_HI, 0) & 0x1ffffff) << 32 | (r.get(nv.NVC56F_SEM_ADDR_LO, 0) & ~3 & 0xffffffff)
    return va, size, (r.get(nv.NVC56F_SEM_PAYLOAD_HI, 0) << 32 if size == 8 else 0) | r.get(nv.NVC56F_SEM_PAYLOAD_LO, 0)

  def describe(self, addr:int, data:int) -> str:
    """a parked acquire: what it waits for and what the semaphore holds"""
    if addr != nv.NVC56F_SEM_EXECUTE or (op:=SEM_ACQ.get(bits(data, 2, 0))) is None: return ""
    va, size, payload = self.sem_operands(data)
    return f" (semaphore acquire at 0x{va:x}: waits for {op} {payload}, holds {int.from_bytes(self.ch.read(va, size, 'hub').tobytes(), 'little')})"

  def semaphore(self, va, op, acq, rel, red_op, payload, size, timestamp, wfi, red, signed):
    gpu = self.ch.gpu
    if op in acq:
      cur = int.from_bytes(self.ch.read(va, size, "hub").tobytes(), "little")
      if not acquire_ok(acq[op], cur, payload, size): raise Stall(va)
      gpu.count("sem_acquire")
    elif op == rel:
      if wfi: gpu.count("wfi")
      release(self.ch.mem, va, payload, size, gpu.clock() if timestamp else None, "hub")
      gpu.count("sem_release")
    elif op == red_op: reduce(self.ch.mem, va, HOST_REDUCTION[red], payload, size, signed, "hub")
    else: raise ChannelError(f"semaphore operation {op} not supported")

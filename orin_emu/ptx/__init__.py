# The SM room: PTX front end, numpy SIMT interpreter, and the compile-side registry (the program interface, README.md).
from orin_emu.ptx import registry
from orin_emu.ptx.sm import execute

def launch(prog, *, grid, block, cbuf0, shared_bytes, mem, shared_window, local_window, program_va):
  """Run the kernel whose program image (bytes from the QMD program address) the registry knows."""
  e = registry.lookup(prog, program_va)
  base = program_va - e.text_off
  execute(e.ptx, e.name, grid=grid, block=block, cbuf0=bytes(cbuf0), param_base=e.param_base, mem=mem, shared_bytes=shared_bytes,
          shared_window=shared_window, local_window=local_window, global_va={n: base + o for n, o in e.globals.items()}, program_va=program_va)

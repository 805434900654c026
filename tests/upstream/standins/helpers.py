# Stand-in for upstream's test/helpers.py, which the PyPI sdist does not ship: the names the upstream tests we run import (test_jit,
# test_hcq, test_randomness, test_symbolic_jit, test_subbuffer, test_graph, test_uops, test_nn), written for tinygrad-orin from what
# those tests expect of them. An initialised tinygrad/ submodule brings the real file instead.
import unittest
from tinygrad import Device
from tinygrad.helpers import getenv
from tinygrad.engine.jit import GraphRunner
from tinygrad.renderer import Renderer
from tinygrad.uop.ops import UOp, KernelInfo
from tinygrad.codegen import full_rewrite_to_sink, line_rewrite, pm_linearize_cleanups
from tinygrad.codegen.late.linearizer import linearize

REAL_DEV = Device.DEFAULT

def assert_jit_cache_len(fxn, expected_len:int):
  """fxn captured expected_len kernels: counted inside the graph when the JIT batched them into one."""
  if not fxn.jit_cache: assert expected_len == 0, f"jit cache is empty, expected {expected_len}"
  elif isinstance(fxn.jit_cache[0].prg, GraphRunner):
    assert len(fxn.jit_cache) == 1, f"expected one graph, got {len(fxn.jit_cache)} cache entries"
    assert len(fxn.jit_cache[0].prg.jit_cache) == expected_len, f"graph holds {len(fxn.jit_cache[0].prg.jit_cache)}, expected {expected_len}"
  else: assert len(fxn.jit_cache) == expected_len, f"jit cache holds {len(fxn.jit_cache)}, expected {expected_len}"

def not_support_multi_device() -> bool: return Device.DEFAULT in ("CPU",) and not getenv("CPU_COUNT", 0)

def _has_second_device() -> bool:
  try: Device[f"{Device.DEFAULT}:1"]
  except Exception: return False
  return True

def needs_second_gpu(fn): return unittest.skipUnless(_has_second_device(), f"needs a second {Device.DEFAULT} device")(fn)

slow = unittest.skipUnless(getenv("RUN_SLOW"), "slow test: set RUN_SLOW=1")

def get_uops(sink:UOp, ren:Renderer|None=None) -> list[UOp]:
  """The kernel's uops as get_program linearizes them for ren (the bare Renderer when None), without rendering: what test_uops checks."""
  sink = sink if sink.arg is not None else sink.replace(arg=KernelInfo())
  return line_rewrite(linearize(full_rewrite_to_sink(sink, ren or Renderer(), optimize=sink.tag is None)), pm_linearize_cleanups)

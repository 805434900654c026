# UOp.key hashes str(arg): a kernel's KernelInfo holds its cost estimates, which for a symbolic shape (a prompt's `toks`) are UOp
# expressions of a thousand nodes and more. Rendering them for every key was a large part of a prompt's first token
from tinygrad import UOp
from tinygrad.renderer import Estimates
from tinygrad.uop import render
from tinygrad.uop.ops import KernelInfo

def test_a_kernels_key_does_not_render_its_symbolic_estimates(monkeypatch):
  toks = UOp.variable("toks", 1, 32)
  sink = UOp.sink(toks * 2, arg=KernelInfo(name="k", estimates=Estimates(ops=toks * 4096 + 7, mem=toks * 8192)))
  def refuse(u): raise AssertionError(f"rendered {u.op} for a key")
  monkeypatch.setattr(render, "pretty_print", refuse)
  assert len(sink.key) == 32

def test_kernels_differing_only_in_name_have_different_keys():
  toks = UOp.variable("toks", 1, 32)
  assert UOp.sink(toks * 2, arg=KernelInfo(name="a")).key != UOp.sink(toks * 2, arg=KernelInfo(name="b")).key

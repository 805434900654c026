# a CUDA graph's kernel node is created before its first launch: a grid or block dimension of 0 there is cuGraphAddKernelNode's
# CUDA_ERROR_INVALID_VALUE, so a dimension that scales with a variable (the prefill's chunk length, at least 1) must not be built at 0
import types
from tinygrad import UOp
from tinygrad.uop.ops import Ops, ProgramInfo
import tinygrad.runtime.graph.cuda as graph

class FakeCuda:
  """the driver calls CUDAGraph makes, cuGraphAddKernelNode refusing a 0 dimension as the driver does"""
  def __init__(self, real): self.real, self.dims = real, []
  def __getattr__(self, name): return getattr(self.real, name)
  def cuGraphCreate(self, *a): return 0
  def cuGraphInstantiate_v2(self, *a): return 0
  def cuGraphDestroy(self, *a): return 0
  def cuGraphExecDestroy(self, *a): return 0
  def cuGraphAddKernelNode(self, node, g, deps, n, params):
    p = params._obj
    self.dims.append(d:=(p.gridDimX, p.gridDimY, p.gridDimZ, p.blockDimX, p.blockDimY, p.blockDimZ))
    return 0 if min(d) >= 1 else 1

def test_a_kernel_node_is_built_with_valid_dims(monkeypatch):
  toks, start = UOp.variable("toks", 1, 32), UOp.variable("start_pos", 0, 1023)
  dims = types.SimpleNamespace(global_size=(toks*64, 1, 1), local_size=(128, 1, 1))
  spec = types.SimpleNamespace(vars=[start, toks], outs=[0], launch_dims=lambda vv: ProgramInfo.launch_dims(dims, vv))
  ast = types.SimpleNamespace(op=Ops.PROGRAM, arg=spec)
  def runner_init(self, linear, input_uops=()):
    self.calls, self.runtimes, self.vars = [(0, ast, [], {})], [types.SimpleNamespace(prg=None, smem=0, signature=None)], ["start_pos", "toks"]
    self.uop_replace, self.var_vals_replace, self.launch_dims_replace = [[]], {}, {0: (0, None)}
  monkeypatch.setattr(graph.MultiGraphRunner, "__init__", runner_init)
  monkeypatch.setattr(graph.CUDAGraph, "new_node", lambda self, bufs, write: (None, graph.cuda.CUgraphNode()))
  monkeypatch.setattr(graph, "encode_args", lambda *a: (None, None))
  monkeypatch.setattr(graph, "cuda", fake:=FakeCuda(graph.cuda))
  def check(status):
    if status != 0:
      raise RuntimeError(f"CUDA Error {status}, {fake.dims[-1]}")
  monkeypatch.setattr(graph, "check", check)
  g = graph.CUDAGraph(None)
  del g  # its __del__ destroys the graph through the fake driver
  assert fake.dims == [(64, 1, 1, 128, 1, 1)]

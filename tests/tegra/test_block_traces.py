# tinygrad/llm/model.py's BlockTraces on the GPU (the emulated Orin here): a block like one traced before in the same forward takes
# that trace's body with its own inputs, and decodes the tokens it would have traced. Block 0's input is the embedding's, the others' a
# block's output: blocks 1 and 2 are alike
import pathlib, sys
import pytest
from tinygrad import Tensor, UOp
from tinygrad.uop.ops import Ops
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "llm"))
from llm_helpers import tiny_llama
from tinygrad.llm import model
from tinygrad.llm.kernels import nv

def traced(monkeypatch) -> list[int]:
  calls: list[int] = []
  real = model.FFNBlock.__call__
  monkeypatch.setattr(model.FFNBlock, "__call__", lambda self, *a: calls.append(1) or real(self, *a))
  return calls

@pytest.mark.parametrize("typ,qwen3", [(nv.Q4_K, False), (nv.Q6_K, False), (nv.Q8_0, False), (nv.Q4_K, True)])
def test_blocks_alike_take_one_trace_and_decode_the_same(dev, tmp_path, monkeypatch, typ, qwen3):
  calls, path = traced(monkeypatch), tiny_llama(tmp_path / "t.gguf", typ, qwen3=qwen3, blocks=3)
  def tokens() -> list[int]:
    g = model.Transformer.from_gguf(path, max_context=32)[0].generate([0, 5, 9, 17])
    return [next(g) for _ in range(5)]
  got, n = tokens(), len(calls)
  # every block traced: the tokens a trace a block gives
  monkeypatch.setattr(model.BlockTraces, "__call__", lambda self, block, x, start_pos: block(x, start_pos))
  assert tokens() == got and len(calls) - n == 3 * n // 2

def test_a_blocks_body_and_inputs_are_its_own_trace(dev, tmp_path):
  # block 2's body is block 1's, its inputs those block 2 traced would take: its own weights' blocks, views and state, new outputs
  m = model.Transformer.from_gguf(tiny_llama(tmp_path / "t.gguf", nv.Q4_K, blocks=3), max_context=32)[0]
  for sp, T in ((0, 4), (UOp.variable("start_pos", 1, 31).bind(4), 1)):
    x = Tensor.randn(1, T, 256, device="NV").realize()
    if new:=[t for b in m.blk for t in b._init_state(x)]: Tensor.realize(*new)
    traces = model.BlockTraces()
    y = traces(m.blk[1], traces(m.blk[0], x, sp), sp)
    reused, own = traces(m.blk[2], y, sp).uop.src[0], m.blk[2](y, sp).uop.src[0]
    assert reused is not own and reused.src[0] is own.src[0] and len(reused.src) == len(own.src)
    kinds = []
    for a, b in zip(reused.src[1:], own.src[1:]):
      kinds.append("same" if a is b else "view" if a.is_realized else "new")
      assert a is b or (a.op is b.op is Ops.BUFFER and a.arg.dtype == b.arg.dtype and a.max_numel() == b.max_numel() and
                        (a.buffer.base, a.buffer.offset, a.buffer.nbytes) == (b.buffer.base, b.buffer.offset, b.buffer.nbytes)
                        if a.is_realized else not b.is_realized)
    # state and norms the same, the weights' blocks read through views of the file, the kernels' outputs new
    assert set(kinds) == {"same", "view", "new"}, kinds

def test_a_block_unlike_the_one_before_is_traced(dev, tmp_path, monkeypatch):
  calls, m = traced(monkeypatch), model.Transformer.from_gguf(tiny_llama(tmp_path / "t.gguf", nv.Q4_K, blocks=3), max_context=32)[0]
  m.blk[2].ffn_norm.eps = 1e-3
  next(m.generate([0, 5, 9, 17]))
  assert len(calls) == 3

"""Helpers shared by the decode tests: prompts, the kernels of one decode step or prompt, logits."""
from tinygrad import Tensor
from tinygrad.apps.llm import Transformer
from tinygrad.engine import realize
from tinygrad.uop.ops import Ops

# prompts of one length, so that the CPU compiles each prefill kernel once
BOS, PROMPTS = 768, [[768, 300, 301], [768, 7, 9], [768, 99, 640]]

class Capture:
  def __init__(self): self.items: list[realize.ExecItem] = []
  def add(self, ei:realize.ExecItem): self.items.append(ei)

def decode_step(model:Transformer) -> list[realize.ExecItem]:
  """the kernels of one decode step (T=1) after a prefill"""
  model(Tensor([PROMPTS[0]], dtype="int32"), 0).realize()
  realize.capturing.append(cap:=Capture())
  try: model(Tensor([[5]], dtype="int32"), len(PROMPTS[0])).realize()
  finally: realize.capturing.remove(cap)
  return [ei for ei in cap.items if ei.ast.op is Ops.SINK]

def prompt_kernels(model:Transformer, tokens:list[int]) -> list[realize.ExecItem]:
  """the kernels of one plain forward of a prompt (T>1) at position 0"""
  realize.capturing.append(cap:=Capture())
  try: model.forward(Tensor([tokens], dtype="int32"), 0).realize()
  finally: realize.capturing.remove(cap)
  return [ei for ei in cap.items if ei.ast.op is Ops.SINK]

def logits(model:Transformer, tokens:list[int]):
  x = model.token_embd(Tensor([tokens], dtype="int32"))
  for block in model.blk: x = block(x, 0)
  return model.output(model.output_norm(x))[0, -1].float().numpy()

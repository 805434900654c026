# Stand-in for upstream's extra/models/unet.py (not in the PyPI sdist): test_jit only builds ResBlock(channels, emb_channels,
# out_channels) and calls it as block(x, emb) on the CPU device.
from tinygrad import Tensor, nn

class ResBlock:
  def __init__(self, channels:int, emb_channels:int, out_channels:int):
    self.in_norm, self.in_conv = nn.GroupNorm(8 if channels % 8 == 0 else 1, channels), nn.Conv2d(channels, out_channels, 3, padding=1)
    self.emb = nn.Linear(emb_channels, out_channels)
    self.out_norm, self.out_conv = nn.GroupNorm(8 if out_channels % 8 == 0 else 1, out_channels), nn.Conv2d(out_channels, out_channels, 3, padding=1)
    self.skip = nn.Conv2d(channels, out_channels, 1) if channels != out_channels else None

  def __call__(self, x:Tensor, emb:Tensor) -> Tensor:
    h = self.in_conv(self.in_norm(x).silu()) + self.emb(emb.silu()).reshape(*emb.shape[:-1], -1, 1, 1)
    h = self.out_conv(self.out_norm(h).silu())
    return (x if self.skip is None else self.skip(x)) + h

# QMD v03_00 (the compute class's launch descriptor, 64 words) decoded with tinygrad's own field table from autogen nv_570.
from tinygrad.runtime.autogen import nv_570 as nv

PREFIX, QMD_BYTES = "NVC6C0_QMDV03_00_", 0x100
FIELDS: dict[str, tuple[int, int]] = {**{k[len(PREFIX):].lower(): v for k, v in vars(nv).items() if k.startswith(PREFIX) and isinstance(v, tuple)},
  **{f"{k[len(PREFIX):].lower()}_{i}": v(i) for k, v in vars(nv).items() if k.startswith(PREFIX) and callable(v) for i in range(8)}}

class QMD:
  def __init__(self, raw:bytes):
    assert len(raw) == QMD_BYTES, len(raw)
    self.bits = int.from_bytes(raw, "little")
  def __getattr__(self, k:str) -> int:
    if (f:=FIELDS.get(k)) is None: raise AttributeError(k)
    return (self.bits >> f[1]) & ((1 << (f[0] - f[1] + 1)) - 1)

  @property
  def program_va(self) -> int: return self.program_address_upper << 32 | self.program_address_lower
  @property
  def grid(self) -> tuple[int, int, int]: return (self.cta_raster_width, self.cta_raster_height, self.cta_raster_depth)
  @property
  def block(self) -> tuple[int, int, int]: return (self.cta_thread_dimension0, self.cta_thread_dimension1, self.cta_thread_dimension2)
  def cbuf(self, i:int) -> tuple[int, int]|None:
    """(va, bytes) of constant buffer i when bound; the size field counts 16-byte units"""
    if not getattr(self, f"constant_buffer_valid_{i}"): return None
    return getattr(self, f"constant_buffer_addr_upper_{i}") << 32 | getattr(self, f"constant_buffer_addr_lower_{i}"), \
           getattr(self, f"constant_buffer_size_shifted4_{i}") << 4
  def release(self, i:int) -> dict|None:
    if not getattr(self, f"release{i}_enable"): return None
    g = lambda f: getattr(self, f"release{i}_{f}")
    return {"va": g("address_upper") << 32 | g("address_lower"), "payload": g("payload_upper") << 32 | g("payload_lower"),
            "payload64": g("payload64b"), "structure": g("structure_size"), "reduction": g("reduction_enable"), "op": g("reduction_op"),
            "format": g("reduction_format")}
  @property
  def dependent(self) -> tuple[int, int]|None:
    """(qmd va, action) of the dependent QMD when enabled; v03_00 has a pointer for dependent QMD 0 only"""
    return (self.dependent_qmd0_pointer << 8, self.dependent_qmd0_action) if self.dependent_qmd0_enable else None

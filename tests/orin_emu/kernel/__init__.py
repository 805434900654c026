# The emulated Orin's kernel room: nvgpu + nvmap as L4T r36.4 answers them (tegra-facts.md §1-3, §8).
from orin_emu.kernel.core import Kernel, kernel, reset, ga10b_characteristics
from orin_emu.kernel.files import NotEmulated
from orin_emu.kernel.memory import KernelError
from orin_emu.kernel.nvgpu import MachineFrozen

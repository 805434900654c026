# The ga10b GPU room of the emulated Orin: channel front end, pushbuffers, host/compute/copy classes, QMDs, faults (README.md).
from orin_emu.gpu.gpu import Ga10bGPU, on_gpu_thread

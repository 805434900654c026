# The ga10b GPU room of the emulated Orin: channel front end, pushbuffers, host/compute/copy classes, QMDs, faults (issue 5).
from orin_emu.gpu.gpu import Ga10bGPU, on_gpu_thread

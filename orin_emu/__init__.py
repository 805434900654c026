# The emulated Jetson Orin AGX: nvgpu/nvmap kernel interface (kernel/), ga10b hardware (gpu/), SM execution (ptx/).

"""The emulated Orin's kernel room: nvgpu + nvmap as L4T r36.4 answers them, one ga10b per process (README.md; each handler names the
source function it mirrors, orin_emu/AUDIT.md lists the rules).

How it is put together (for the GPU room, TegraIface and the log checker):
- kernel() is the process-wide Orin; reset() boots a fresh one (tests). A forked child boots its own on first use; it keeps the fds of
  the parent's open files, as fork does, but requests on them raise NotEmulated (the real driver would serve them on the parent's
  objects), and it has none of the parent's mappings: gk20a_ctrl_dev_mmap and __nvmap_map make theirs VM_DONTCOPY (MADV_DONTFORK here).
- Open files (nvmap clients, ctrl, AS, TSG, channel, dma-buf, /dev/kmsg, devfreq attributes) each own a real fd (a tiny memfd), so
  fd numbers, O_CLOEXEC and /proc/self/fd counts are the OS's. A fd closed with os.close() instead of through the seam is noticed
  (its inode changed or vanished) and released as close() would have.
- DRAM is one sparse memfd (dram_size, 64 GiB by default): an nvmap buffer is a page range of it, its GPU view a numpy view of the
  emulator's mapping, and a dma-buf mmap maps the same range again, so CPU and GPU see the same bytes. The emulator holds one fd for
  all buffers. GET_FD fds of one buffer share one file (inode) while any of them is open; once all are closed the next GET_FD makes
  a new file, where the device would still hand out the same dma-buf file.
  Memory is released when the handle, every dma-buf fd, GPU mapping and channel pin are gone and no CPU mapping remains
  (/proc/self/maps). Released pages read as zeros when reused.
- GPU VAs come from nvgpu's buddy allocator (buddy.py); Vm.mem is the memory interface's GpuMemory.
- The GPU-room interface: when orin_emu.gpu is importable, Kernel.gpu = Ga10bGPU(klog) gets the usermode page (gpu.usermode), add_channel at
  SETUP_BIND, alloc_obj at ALLOC_OBJ_CTX, remove_channel at close; Channel.fault is the on_error callback. Without it, doorbells are
  simply not serviced.
- The kernel log is an append-only file shared with child processes (ORIN_EMU_KMSG), read through /dev/kmsg records. Its owner
  removes it at exit; the log of an owner killed before that is removed when the next machine boots (the pid is in its name).
- Fault injection: Kernel.faults (alloc, ioctl, open, mmap; or ORIN_EMU_FAULTS in a child's environment), Kernel.channel_error().
  Another Orin: Kernel(**characteristics) or ORIN_EMU_CHARACTERISTICS, Kernel(tpc_masks=) or ORIN_EMU_TPC_MASKS (gated TPCs).
  Leaks: Kernel.counts().
- A request the real driver serves but this emulator does not raises NotEmulated; one where the real kernel would truncate a VA of
  its own buffers past 40 bits or BUG() (kernel/grctx.py: SETUP_BIND, ALLOC_OBJ_CTX) raises MachineFrozen. Neither is an OSError, so
  no caller can take them for the driver's answer.
"""
from orin_emu.kernel.core import Kernel, kernel, reset, ga10b_characteristics
from orin_emu.kernel.files import NotEmulated
from orin_emu.kernel.memory import KernelError
from orin_emu.kernel.grctx import MachineFrozen

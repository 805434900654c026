# Kernel-log lines the ga10b driver prints for GPU-side events. The messages are nvgpu's (hal/fb/fb_mmu_fault_gv11b_fusa.c, common/gr/
# gr_intr.c, hal/gr/intr/gr_intr_gv11b_fusa.c and gr_intr_gm20b_fusa.c, hal/ce/ce_gv11b_fusa.c; the error-reporting line was seen on
# an Orin, OBSERVED.md); the MMU fault lines' function and line numbers are those of L4T r36.4, the others' were not checked (README.md
# "Known differences").
GPU_NAME = "17000000.gpu"
MMU_ENGINE = {"gr": 64, "ce": 15, "host": 31}   # unconfirmed ga10b mmu engine ids (gv11b numbering)

def nvgpu(func:str, line:int, level:str, msg:str) -> str: return f"nvgpu: {GPU_NAME} {func:>33}:{line:<4} [{level}]  {msg[:159]}"

def report_hook() -> str: return nvgpu("nvgpu_cic_mon_report_err_safety_services", 86, "ERR", "Error reporting is not supported in this platform")

def mmu_fault(f, chid:int, engine:str, client_id:str) -> list[str]:
  return [report_hook(),
    nvgpu("gv11b_fb_mmu_fault_info_dump", 294, "ERR", f"[MMU FAULT] mmu engine id:  {MMU_ENGINE[engine]}, ch id:  {chid}, fault addr: 0x{f.va:x}, "
          f"fault addr aperture: 0, fault type: {f.fault_type}, access type: {f.access}, "),
    nvgpu("gv11b_fb_mmu_fault_info_dump", 307, "ERR", f"[MMU FAULT] protected mode: 0, client type: {f.client}, client id:  {client_id}, "
          f"gpc id if client type is gpc: 0, ")]

NO_LOCK_DOWN_GLOBAL_ESR = 0x70   # breakpoint int/pause, single step: not errors (gm20b_gr_intr_get_sm_no_lock_down_hww_global_esr_mask)

def sm_exception(f, sm_id:int=0) -> list[str]:
  # the machine check line only for a global ESR bit outside that mask (nvgpu_gr_intr_handle_sm_exception, is_global_esr_error)
  return [report_hook(),
    *([nvgpu("gv11b_gr_intr_handle_sm_exception", 1010, "ERR", "sm machine check err. gpc_id(0), tpc_id(0), offset(0)")]
      if f.global_esr & ~NO_LOCK_DOWN_GLOBAL_ESR else []),
    nvgpu("gr_intr_handle_sm_exception", 315, "ERR", f"sm err state gpc_id(0), tpc_id(0), offset(0), sm_id({sm_id}), "
          f"hww_global_esr {f.global_esr},hww_warp_esr {f.warp_esr}, hww_warp_esr_pc 0x{f.pc:x}"),
    nvgpu("gv11b_gr_intr_handle_sm_exception", 1048, "ERR", f"sm hww global 0x{f.global_esr:08x} warp 0x{f.warp_esr:08x}")]

def sked_exception(esr:int) -> list[str]:
  return [report_hook(), nvgpu("gm20b_gr_intr_check_gr_sked_exception", 253, "ERR", f"sked exception: esr 0x{esr:08x}"),
    nvgpu("gr_intr_handle_exception_interrupts", 1001, "ERR", "set gr exception notifier"),
    *[nvgpu("gv11b_ce_halt_engine", 107, "ERR", f"The CE engine {i} is not idlewhile reset") for i in (0, 1)]]

def channel_error(chid:int, msg:str) -> list[str]: return [nvgpu("nvgpu_channel_set_error_notifier", 472, "ERR", f"ch {chid}: {msg}")]

"""Make the materialised master tree able to run upstream's tests offline. ../shared/upstream's tarball leaves out the AMD register
headers, and upstream's mock GPU (DEV=MOCK+NV, test/mockgpu) parses extra/hip_gpu_driver/kfd_ioctl.h at import: the same UAPI header
from Debian's linux-libc-dev stands in for it (only its ioctl layout is read). Upstream's own files are never overwritten."""
import shutil
from pathlib import Path

STANDINS = {"extra/hip_gpu_driver/kfd_ioctl.h": Path("/usr/include/linux/kfd_ioctl.h")}

def prepare(tree:Path) -> list[str]:
  """Write what the tree lacks; returns the paths written, for the log."""
  written = []
  for rel, src in STANDINS.items():
    if (dst:=tree/rel).exists(): continue
    if not src.exists(): raise RuntimeError(f"{src} is missing: install Debian's linux-libc-dev (upstream's mock GPU reads {rel})")
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    written.append(rel)
  if written and (tree/".git").is_dir():   # keep `git status` of the patch tree clean: test scaffolding, not patch work
    ex = tree/".git"/"info"/"exclude"
    excluded = ex.read_text().splitlines() if ex.exists() else []
    with open(ex, "a") as f: f.writelines(f"/{w}\n" for w in written if f"/{w}" not in excluded)
  return written

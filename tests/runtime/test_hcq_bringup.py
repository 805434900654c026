# A bring-up that fails part way leaves HCQ's peer group and signal pool as they were and a retry works; finalize() is final.
# Runs on any HCQ NV interface (the mock one by default); upstream this belongs in test/device/test_hcq.py.
import os, subprocess, sys, textwrap

def run(src:str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-c", textwrap.dedent(src)], capture_output=True, text=True, timeout=300,
                        env={"DEV": "MOCK+NV:PTX", **os.environ})

def test_failed_bring_up_is_forgotten_and_a_retry_works():
  r = run("""
    from tinygrad import Device, Tensor
    from tinygrad.runtime.ops_nv import NVDevice
    from tinygrad.runtime.support.hcq import HCQCompiled
    def state(): return [len(d["NV"]) for d in (HCQCompiled.peer_groups, HCQCompiled.signal_pages, HCQCompiled.signal_pool)]
    setup = NVDevice._setup_gpfifos
    def fail(self): raise MemoryError("injected")   # after HCQCompiled.__init__: the device is in the peer group with its signals
    NVDevice._setup_gpfifos = fail
    try: Device["NV"]
    except MemoryError as e: print("FAILED", e, state())
    NVDevice._setup_gpfifos = setup
    print("RETRY", Tensor([1., 2.], device="NV").realize().tolist(), state()[0])
  """)
  assert "FAILED injected [0, 0, 0]" in r.stdout and "RETRY [1.0, 2.0] 1" in r.stdout and r.returncode == 0, r.stdout + r.stderr[-3000:]

def test_finalize_is_final():
  r = run("""
    from tinygrad import Device, Tensor
    t = Tensor([1., 2.], device="NV").realize()
    Device["NV"].finalize()
    try: t.tolist()
    except RuntimeError as e: print("AFTER", e)
  """)   # and the exit, which finalizes again and frees t, is quiet
  assert "AFTER NV device was finalized" in r.stdout and r.returncode == 0 and r.stderr == "", r.stdout + r.stderr[-3000:]

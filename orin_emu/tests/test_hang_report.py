# The hang report plugin (orin_emu.hang_report): a test whose HCQ wait timed out shows where the emulated GPU was.
import os, subprocess, sys, textwrap

def test_timed_out_wait_reports_the_parked_channel(tmp_path):
  (tmp_path/"test_hang.py").write_text(textwrap.dedent("""
    from tinygrad import Device
    def test_wait_on_a_signal_nobody_sets():
      dev = Device["NV"]
      dev.hw_compute_queue_t().wait(dev.new_signal(value=0), 1).signal(dev.timeline_signal, dev.next_timeline()).submit(dev)
      dev.synchronize()
  """))
  r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "orin_emu.hang_report", "test_hang.py"], cwd=tmp_path,
                     capture_output=True, text=True, timeout=300, env={**os.environ, "ORIN_EMU": "1", "NV": "1", "HCQDEV_WAIT_TIMEOUT_MS": "300"})
  assert "1 failed" in r.stdout, r.stdout + r.stderr
  report = r.stdout.split("emulated Orin GPU after the wait timed out", 1)[-1]
  assert "ga10b-engines: running" in report and "semaphore acquire at 0x" in report and "waits for circ_geq 1, holds 0" in report, r.stdout

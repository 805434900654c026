# scripts/run's job (scripts/demo.py) decodes SmolLM2 and says whether its text is llama.cpp's on these weights; here on the CPU, where
# scripts/run puts it on the Orin (this Jetson's GPU, else the emulated Orin)
import sys
import demo   # scripts/, on the path from conftest.py

def test_main_job_decodes_smollm2_to_llama_cpps_text(monkeypatch, capsys):
  monkeypatch.setattr(sys, "argv", ["demo.py", "--tokens", "2"])
  demo.main()
  out = capsys.readouterr().out
  assert "'The capital of France is' -> ' Paris.' (the continuation llama.cpp gives on these weights in F32" in out
  assert " tokens/s (median of 1 after 1 warm-up; first token " in out

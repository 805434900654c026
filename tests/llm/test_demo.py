# scripts/run's job (scripts/demo.py) decodes SmolLM2 through tinygrad.llm and says whether its text is llama.cpp's on these weights; here
# on the CPU, where scripts/run puts it on the Orin (this Jetson's GPU, else the emulated Orin)
import sys
import demo   # scripts/, on the path from conftest.py

def test_main_job_decodes_smollm2_to_llama_cpps_text(monkeypatch, capsys):
  monkeypatch.setattr(sys, "argv", ["demo.py", "--tokens", "4"])
  demo.main()
  out = capsys.readouterr().out
  assert "'The capital of France is' -> ' Paris.\\n\\n' (the continuation llama.cpp gives on these weights in F32" in out
  assert " (median of 1; the tokens before: " in out and " s, the first with the prompt of 5 tokens)" in out

def test_speed_under_a_token_a_second_is_given_in_seconds_per_token():
  # the emulated Orin decodes SmolLM2 at about 0.01 tokens/s: "0.00 tokens/s" would say nothing
  assert demo.rate(0.0125) == "80.00 tokens/s" and demo.rate(1.0) == "1.00 tokens/s"
  assert demo.rate(1.5) == "1.5 s/token" and demo.rate(312.4) == "312.4 s/token"

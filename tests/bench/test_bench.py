import json, os, pathlib, subprocess, sys, types
import pytest

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
import bench  # noqa: E402

def run_bench(tmp_path, *args) -> dict:
  subprocess.run([sys.executable, str(SCRIPTS / "bench.py"), "--out", str(tmp_path), *args], check=True, timeout=600)
  return json.loads((tmp_path / "bench.json").read_text())

def test_cpu_run_measures_and_reports_skips(tmp_path):
  report = run_bench(tmp_path, "--only", "copy,alloc,launch")
  by_dev = {r["device"]: r for r in report["results"]}
  assert set(by_dev) == {"NV", "CUDA", "CPU"}
  for dev in ("NV", "CUDA"): assert by_dev[dev]["rows"] or by_dev[dev]["skipped"]  # a device that does not open says why
  ran = [r for r in report["results"] if r["rows"]]
  assert ran, "no device ran"
  rows = ran[0]["rows"]
  assert {r["suite"] for r in rows} == {"copy", "alloc", "launch"} and all(r["value"] > 0 for r in rows)
  assert {r["name"] for r in rows} >= {"copyin 1 MiB", "copyout 1 MiB", "alloc 4096 B", "launch p50", "launch p99"}
  md = (tmp_path / "bench.md").read_text()
  assert "| launch p50 | us |" in md

def test_llm_decode_on_the_tiny_gguf(tmp_path):
  report = run_bench(tmp_path, "--devices", "CPU", "--only", "llm", "--warmup", "2", "--tokens", "4", "--max-context", "64")
  (row,) = report["results"][0]["rows"]
  assert row["unit"] == "tok/s" and row["value"] > 0 and row["kernels_per_token"] > 1 and row["tokens"] == 4

def test_the_synthetic_gguf_is_renamed_into_place(monkeypatch, tmp_path):
  # two workers at once (pytest -n 2) write and read the same file: each writes beside it and renames, so a reader sees a whole GGUF
  import synth_gguf
  monkeypatch.setattr(bench.tempfile, "gettempdir", lambda: str(tmp_path))
  class Written(Exception): pass
  def write(path, *args): raise Written(path)
  monkeypatch.setattr(synth_gguf, "write_llama_gguf", write)
  with pytest.raises(Written) as e: bench.bench_llm("CPU", {}, None, "tiny", [], 1, 1, 64)
  assert e.value.args[0].name != "synth-tiny.gguf" and e.value.args[0].parent == pathlib.Path(bench.tempfile.gettempdir())

def test_llm_decode_from_a_start_position(tmp_path):
  # a long-context step without prefilling the context: the JIT decodes from --start-pos over the fresh (zero) KV cache
  report = run_bench(tmp_path, "--devices", "CPU", "--only", "llm", "--warmup", "2", "--tokens", "4", "--max-context", "64", "--start-pos", "48")
  (row,) = report["results"][0]["rows"]
  assert row["value"] > 0 and row["start_pos"] == 48 and row["prompt_len"] == 0 and row["name"].endswith(" @48")

def test_llm_prefill_and_profile_through_masters_app(tmp_path):
  # master's model takes the sampling temperature: --prefill times a prompt through python -m tinygrad.llm's Transformer. Its generate
  # hands out queued steps' tokens without a kernel: --profile after 14 tokens (mid-way through 8 queued) still times a step's kernels,
  # as many as the captured JIT launches
  env = {**os.environ, "PYTHONPATH": str(SCRIPTS.parent / "build" / "master" / "tinygrad")}
  subprocess.run([sys.executable, str(SCRIPTS / "bench.py"), "--out", str(tmp_path), "--devices", "CPU", "--only", "llm", "--warmup", "6",
                  "--tokens", "8", "--max-context", "64", "--prefill", "40", "--profile"], check=True, timeout=600, env=env)
  rows = json.loads((tmp_path / "bench.json").read_text())["results"][0]["rows"]
  # 40 tokens: two of generate's chunks, and past the tiny vocabulary's 1024 ids from 1000 on
  assert [r["name"] for r in rows if r["name"].startswith("prefill")] == ["prefill 40"] and all(r["value"] > 0 for r in rows)
  prof = next(r["profile"] for r in rows if "profile" in r)
  assert prof["steps"] >= 1 and prof["kernels"] > 10 and prof["total_us"] > 0
  # kernels a step: the launches of master's captured JIT
  assert next(r["kernels_per_token"] for r in rows if "profile" in r) == prof["kernels"]

def test_first_token_counts_what_it_compiled(tmp_path):
  # a first token with a warm compile cache (the 1.5 s) is one that compiled nothing: the second run on one CACHEDB compiles none,
  # and the table says how many the first did
  env = {**os.environ, "PYTHONPATH": str(SCRIPTS.parent / "build" / "master" / "tinygrad"), "CACHEDB": str(tmp_path / "cache.db")}
  def first(run:str) -> dict:
    subprocess.run([sys.executable, str(SCRIPTS / "bench.py"), "--out", str(tmp_path / run), "--devices", "CPU", "--only", "llm", "--warmup", "1",
                    "--tokens", "2", "--max-context", "64"], check=True, timeout=600, env=env)
    return json.loads((tmp_path / run / "bench.json").read_text())["results"][0]
  cold, warm = first("cold"), first("warm")
  assert cold["rows"][0]["first_token_compiled"] > 10 and warm["rows"][0]["first_token_compiled"] == 0
  cold.update(build="b", sms_label="full GPU")
  assert f"| {cold['rows'][0]['first_token_s']:.1f} ({cold['rows'][0]['first_token_compiled']} compiled) |" in bench.proxy_table([cold])
  # a warm column's first token is the table's, named where it is not the first column's
  warm.update(build="b", sms_label="8 SMs")
  assert f"| {warm['rows'][0]['first_token_s']:.1f} (8 SMs) |" in bench.proxy_table([cold, warm])
  assert f"| {warm['rows'][0]['first_token_s']:.1f} |" in bench.proxy_table([{**warm, "sms_label": "full GPU"}, {**cold, "sms_label": "8 SMs"}])

def test_first_token_again_in_a_new_process(tmp_path):
  # --first-token-again times a second process's first token, the caches the run filled warm: the table's first token
  env = {**os.environ, "PYTHONPATH": str(SCRIPTS.parent / "build" / "master" / "tinygrad"), "CACHEDB": str(tmp_path / "cache.db")}
  subprocess.run([sys.executable, str(SCRIPTS / "bench.py"), "--out", str(tmp_path), "--devices", "CPU", "--only", "llm", "--warmup", "1",
                  "--tokens", "2", "--max-context", "64", "--first-token-again", "--build", f"b={env['PYTHONPATH']}"], check=True, timeout=600, env=env)
  res = json.loads((tmp_path / "bench.json").read_text())["results"]
  (row,) = [r for r in res[0]["rows"] if r["name"].startswith("decode")]
  assert row["first_token_compiled"] > 10 and row["first_token_again_compiled"] == 0
  assert f"| {row['first_token_again_s']:.1f} |" in bench.proxy_table([{**res[0], "sms_label": "full GPU"}])

def test_prefill_runs_a_prompt_as_generate_does():
  # a user's prompt is generate's (master: chunks of 32 through the prefill JIT) up to its first token, each run from empty caches
  # (a cached prefix would be reused), not one model() call of the whole prompt
  class Model:
    token_embd = types.SimpleNamespace(weight=types.SimpleNamespace(shape=(1024, 8)))
    def __init__(self): self.runs, self._cached_tokens = [], [7]
    def __call__(self, *args): raise AssertionError("a prompt is not one model() call")
    def generate(self, toks:list[int]):
      assert all(0 <= t < 1024 for t in toks), "a token outside the vocabulary"
      self.runs.append((len(toks), list(self._cached_tokens)))
      self._cached_tokens = toks
      yield 0
  env = dict(os.environ)
  row = bench.bench_prefill(m:=Model(), 40, "CPU")
  # tinygrad 0.12.0 exports its default device (CPU=1) once it picks one: master, in later tests' children, refuses that
  assert os.environ == env
  assert m.runs == [(40, [])] * 4 and row["name"] == "prefill 40" and len(row["times_s"]) == 4
  # a later turn: the prefix once, then each run finds it in the caches and takes the prompt after it
  row = bench.bench_prefill(m:=Model(), 40, "CPU", at=8)
  assert m.runs == [(8, [])] + [(48, [1000 + i for i in range(8)])] * 4 and row["name"] == "prefill 40 @8" and row["start_pos"] == 8

def test_llm_decode_from_a_start_position_through_masters_app(tmp_path):
  # and --prefill's prompt after a prefix of --start-pos tokens, as a chat's later turn
  env = {**os.environ, "PYTHONPATH": str(SCRIPTS.parent / "build" / "master" / "tinygrad")}
  subprocess.run([sys.executable, str(SCRIPTS / "bench.py"), "--out", str(tmp_path), "--devices", "CPU", "--only", "llm", "--warmup", "2",
                  "--tokens", "4", "--max-context", "64", "--start-pos", "40", "--prefill", "16"], check=True, timeout=600, env=env)
  row, pre = json.loads((tmp_path / "bench.json").read_text())["results"][0]["rows"]
  assert row["value"] > 0 and row["start_pos"] == 40 and row["name"].endswith(" @40")
  assert pre["name"] == "prefill 16 @40" and pre["value"] > 0 and pre["start_pos"] == 40

def test_table_and_plot_cover_every_device(tmp_path):
  results = [dict(device="CUDA", rows=[dict(suite="matmul", name="matmul half 256", value=1.5, unit="GFLOPS")]),
             dict(device="NV", rows=[dict(suite="matmul", name="matmul half 256", value=2.5, unit="GFLOPS")]),
             dict(device="CPU", skipped="a GPU ran", rows=[])]
  md = bench.table(results)
  assert "| matmul half 256 | GFLOPS | 1.5 | 2.5 |" in md and "skipped CPU: a GPU ran" in md
  pytest.importorskip("matplotlib")
  assert bench.plot(results, tmp_path / "p.png") is None and (tmp_path / "p.png").stat().st_size > 1000

def test_build_specs_and_the_side_by_side_table():
  assert bench.parse_build("tinygrad 0.12.0=/t/base") == dict(label="tinygrad 0.12.0", path="/t/base", env={})
  assert bench.parse_build("fp16=/t/s;GGUF_QUANT=0;MV_THREADS_PER_SM=0") == dict(label="fp16", path="/t/s", env={"GGUF_QUANT": "0", "MV_THREADS_PER_SM": "0"})
  dec = lambda v, **kw: dict(suite="llm", name="decode x.gguf MV=default", value=v, unit="tok/s", **kw)
  pre = lambda v: dict(suite="llm", name="prefill 512", value=v, unit="tok/s")
  lc = lambda tg, pp: [dict(suite="llm", name="llama-bench pp512", value=pp, unit="tok/s"), dict(suite="llm", name="llama-bench tg128", value=tg, unit="tok/s")]
  results = [dict(build="series", sms_label="full GPU", device="CUDA", rows=[dec(600.0, load_s=9.25, first_token_s=2.5, kernels_per_token=233), pre(1000.0)]),
             dict(build="llama.cpp", sms_label="full GPU", device="llama.cpp", rows=lc(750.0, 30000.0)),
             dict(build="series", sms_label="8 SMs", device="CUDA", rows=[dec(130.0, load_s=8.0, first_token_s=3.0, kernels_per_token=233)]),
             dict(build="llama.cpp", sms_label="8 SMs", device="llama.cpp", rows=lc(86.0, 3000.0)),
             dict(build="old", sms_label="8 SMs", device="CUDA", skipped="worker ran past --timeout 80s", rows=[])]
  md = bench.proxy_table(results)
  assert "| build | decode tok/s, full GPU | decode tok/s, 8 SMs | prompt tok/s, full GPU | prompt tok/s, 8 SMs | load s | first token s | kernels a step |" in md
  assert "| series | 600.0 (0.80x) | 130.0 (1.51x) | 1000.0 (0.03x) | - | 9.2 | 2.5 | 233 |" in md
  assert "| llama.cpp | 750.0 | 86.0 | 30000.0 | 3000.0 |  |  |  |" in md and "skipped old, 8 SMs: worker ran past --timeout 80s" in md

def test_decode_times_tg128s_positions():
  # llama-bench's tg128 decodes positions 0-127: after the 16-token prompt and 8 warm-up steps, 105 timed steps end at 127 (a step's cost
  # grows with its position: 32 would stop at 54). From --start-pos, 32 steps from there; --tokens as given
  assert bench.decode_tokens(None, 8, 0) == 105 and bench.decode_tokens(None, 8, 3000) == 32 and bench.decode_tokens(4, 2, 0) == 4
  row = lambda **kw: dict(suite="llm", name="decode m.gguf MV=default", value=1.0, unit="tok/s", **kw)
  results = [dict(build="series", sms_label="full GPU", device="CUDA", rows=[row(warmup=8, tokens=105, prompt_len=16, start_pos=0)]),
             dict(build="long", sms_label="full GPU", device="CUDA", rows=[row(warmup=8, tokens=32, prompt_len=0, start_pos=3000)])]
  md = bench.proxy_table(results)
  assert "decode: positions 23-127 timed, after 8 warm-up steps and a 16-token prompt" in md and "decode: positions 3008-3039 timed" in md

def test_mps_percentage_is_the_smallest_giving_the_sms(monkeypatch):
  # MPS rounds an active thread percentage to whole TPCs (an H100: 6% and 7% give 8 of 132 SMs, 11% and 12% give 14, 13% gives 16)
  seen = {p: 8 if p <= 7 else 10 if p <= 9 else 12 if p == 10 else 14 if p <= 12 else 16 for p in range(1, 101)}
  monkeypatch.setattr(bench, "sms_seen", lambda pct: 132 if pct is None else seen[pct])
  assert bench.MPS.percentage(None, 14, 132) == (11, 14) and bench.MPS.percentage(None, 8, 132) == (1, 8)
  # a client that reads the whole GPU whatever the limit: the percentage nearest, what it sees unknown
  monkeypatch.setattr(bench, "sms_seen", lambda pct: 132)
  assert bench.MPS.percentage(None, 14, 132) == (11, None)

def test_merge_puts_the_columns_of_several_runs_in_one_table(tmp_path):
  dec = lambda v: dict(suite="llm", name="decode x.gguf MV=default", value=v, unit="tok/s", load_s=9.0, first_token_s=2.0, kernels_per_token=233)
  lc = lambda tg: [dict(suite="llm", name="llama-bench tg128", value=tg, unit="tok/s")]
  def report(name, gpu, col, v, tg):
    (p:=tmp_path / f"{name}.json").write_text(json.dumps(dict(when=name, host="h", cpu="x", gpu=gpu, full=False, command=f"bench {name}", results=[
      dict(build="series", sms_label=col, device="CUDA", rows=[dec(v)]), dict(build="llama.cpp", sms_label=col, device="llama.cpp", rows=lc(tg))])))
    return str(p)
  a, b = report("a", "H100", "full GPU", 800.0, 750.0), report("b", "H100", "8 SMs", 120.0, 80.0)
  subprocess.run([sys.executable, str(SCRIPTS / "bench.py"), "--merge", a, b, "--out", str(tmp_path / "m")], check=True, timeout=120)
  assert "| series | 800.0 (1.07x) | 120.0 (1.50x) | 9.0 | 2.0 | 233 |" in (tmp_path / "m" / "bench.md").read_text()
  assert json.loads((tmp_path / "m" / "bench.json").read_text())["command"] == ["bench a", "bench b"]
  c = report("c", "H200", "14 SMs", 1.0, 1.0)
  assert subprocess.run([sys.executable, str(SCRIPTS / "bench.py"), "--merge", a, c, "--out", str(tmp_path / "n")], timeout=120).returncode != 0

def test_the_zoo_table_has_a_row_a_model_and_build(tmp_path):
  # each build's ratio is to llama.cpp on the same model and SM limit; the weights' bandwidth of the first column
  dec = lambda v, gbs: dict(suite="llm", name="decode m.gguf MV=default", value=v, unit="tok/s", load_s=2.0, first_token_s=1.0, kernels_per_token=170,
                            weight_GB_s=gbs)
  lc = lambda tg: [dict(suite="llm", name="llama-bench tg128", value=tg, unit="tok/s")]
  results = [dict(model=m, build=b, sms_label=c, device="CUDA", rows=dec(v, g) if b != "llama.cpp" else lc(v))
             for m, b, c, v, g in [("llama-3.2-1b q6_k", "series", "full GPU", 1200.0, 1234.5), ("llama-3.2-1b q6_k", "llama.cpp", "full GPU", 800.0, 0),
                                   ("llama-3.1-8b q4_k_m", "series", "full GPU", 300.0, 1490.0), ("llama-3.1-8b q4_k_m", "llama.cpp", "full GPU", 250.0, 0)]]
  for r in results: r["rows"] = [r["rows"]] if isinstance(r["rows"], dict) else r["rows"]
  md = bench.proxy_table(results)
  assert "| model | build | decode tok/s, full GPU | weights GB/s | load s | first token s | kernels a step |" in md
  assert "| llama-3.2-1b q6_k | series | 1200.0 (1.50x) | 1234.5 | 2.0 | 1.0 | 170 |" in md
  assert "| llama-3.1-8b q4_k_m | series | 300.0 (1.20x) | 1490.0 | 2.0 | 1.0 | 170 |" in md and "| llama-3.1-8b q4_k_m | llama.cpp | 250.0 |" in md
  doc = tmp_path / "b.md"
  doc.write_text("# B\n<!-- bench table -->\nold\n<!-- end bench table -->\nafter\n")
  bench.write_doc(doc, md + "\n", "x.json")
  text = doc.read_text()
  assert text.startswith("# B\n<!-- bench table -->\nGenerated by `scripts/bench.py --merge x.json --doc") and "old" not in text
  assert md in text and text.endswith("<!-- end bench table -->\nafter\n")

def test_step_bytes_are_the_files_weights_a_step_reads(tmp_path, monkeypatch):
  # the embedding table is read a row a token, unless the output projection is tied to it; the bytes as stored, not dequantized
  sys.path.insert(0, str(SCRIPTS))
  from synth_gguf import PRESETS, write_llama_gguf
  import gguf
  monkeypatch.setitem(PRESETS, "tiny-untied", dict(PRESETS["tiny"], tied=False))
  for preset in ("tiny", "tiny-untied"):
    p = write_llama_gguf(tmp_path / f"{preset}.gguf", preset)
    sizes = {t.name: int(t.n_bytes) for t in gguf.GGUFReader(p).tensors}
    assert bench.step_bytes(str(p)) == sum(sizes.values()) - (sizes["token_embd.weight"] if preset == "tiny-untied" else 0)

def test_llama_bench_at_a_depth(tmp_path):
  # --start-pos runs llama-bench at that depth (-d): its pp512 and tg128 after as many tokens, beside the later turn's prompt
  fake = tmp_path / "llama-bench"
  fake.write_text("#!/bin/sh\necho \"$@\" > " + str(tmp_path / "args") + "\necho '[{\"n_prompt\": 512, \"n_gen\": 0, \"avg_ts\": 900.0, "
                  "\"stddev_ts\": 1.0}, {\"n_prompt\": 0, \"n_gen\": 128, \"avg_ts\": 90.0, \"stddev_ts\": 1.0}]'\n")
  fake.chmod(0o755)
  res = bench.llama_bench(str(fake), "m.gguf", dict(os.environ), 1, depth=512)
  assert (tmp_path / "args").read_text().split()[-2:] == ["-d", "512"]
  assert [r["name"] for r in res["rows"]] == ["llama-bench pp512 @512", "llama-bench tg128 @512"]
  bench.llama_bench(str(fake), "m.gguf", dict(os.environ), 1)
  assert "-d" not in (tmp_path / "args").read_text().split()

import json, os, pathlib, subprocess, sys
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
import kernel_bench  # noqa: E402

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "scripts"
TREE = SCRIPTS.parent / "build" / "master" / "tinygrad"
# the NULL device with CUDA's renderer: the kernels are built and launched, not run; nv.py's device queries answered as a 132-SM GPU's
RUN = """
import json, sys; sys.path.insert(0, {scripts!r})
from tinygrad.llm.kernels import nv
nv.sm_count, nv.has_byte_perm, nv.nv_custom_kernels_supported, nv.has_local = (lambda d: 132), *[lambda d: True] * 3
import kernel_bench
kernel_bench.SWEEP = kernel_bench.SWEEP[:6]
real = nv._matvec_fxn
rows = kernel_bench.matvec(["1b qk q4_k"], True, reps=1)
print(json.dumps([rows, kernel_bench.attention([5, 40], reps=1), nv._matvec_fxn is real or nv._matvec_fxn.__name__]))
"""

def test_matvec_and_attention_kernels_alone():
  env = {**os.environ, "PYTHONPATH": str(TREE), "DEV": "NULL:CUDA:sm_90", "NULL_ALLOW_COPYOUT": "1"}
  out = subprocess.run([sys.executable, "-c", RUN.format(scripts=str(SCRIPTS))], env=env, capture_output=True, text=True, timeout=600, check=True)
  rows, att, restored = json.loads(out.stdout.splitlines()[-1])
  # the default launch shape first, as _matvec_fxn picks it, then the sweep's with at most 128 weights a thread a row
  assert rows[0]["default"] and rows[0]["launch"] == [2, 2, 1, 1, 8] and all(r["us"] > 0 and r["GB_s"] > 0 and r["same_output"] for r in rows)
  assert len(rows) == 1 + sum(r * u * 16 <= 128 and 2560 % (r * wg) == 0 for _, r, wg, u in kernel_bench.SWEEP[:6])
  assert [(a["heads"], a["head_dim"], a["position"]) for a in att] == [(32, 128, 5), (32, 128, 40), (16, 128, 5), (16, 128, 40), (32, 64, 5),
                                                                      (32, 64, 40)]
  # after a sweep nv.matvec picks its own launch shapes again
  assert restored is True

def test_sass_counts_the_longest_loop():
  # cuobjdump's lines: address, an optional predicate, the instruction; a branch back to an earlier address closes a loop
  lines = [(0x0, "S2R R0, SR_TID.X"), (0x10, "LDG.E R2, [R4.64]"), (0x20, "FFMA R1, R2, R3, R1"), (0x30, "@P0 BRA 0x10"),
           (0x40, "PRMT R5, R2, 0x7104, RZ"), (0x50, "BRA.U 0x40"), (0x60, "EXIT")]
  dump = "\n".join(f"        /*{a:04x}*/  {i} ;  /* 0x0 */" for a, i in lines)
  assert kernel_bench.loop_ops(dump) == (True, {"LDG": 1, "FFMA": 1, "BRA": 1})
  assert kernel_bench.loop_ops(dump.replace("@P0 BRA 0x10", "NOP").replace("BRA.U 0x40", "NOP"))[0] is False

def test_shapes_cover_the_zoos_q4_k_m_matvecs():
  # each Q4_K_M of the zoo runs q, k and v as one Q4_K matvec where its attn_v is Q4_K (llama.cpp's mix): those shapes are timed too
  import synth_gguf
  for preset, quant in synth_gguf.ZOO:
    if quant != "q4_k_m": continue
    p, types = synth_gguf.PRESETS[preset], synth_gguf.tensor_types(synth_gguf.PRESETS[preset], quant)
    shapes = synth_gguf.tensor_shapes(p)
    qkv = {sum(shapes[f"blk.{i}.attn_{w}.weight"][0] for w in "qkv") for i in range(p["n_layers"]) if types[f"blk.{i}.attn_v.weight"] == 12}
    assert qkv and {(12, rows, p["dim"], False) for rows in qkv} <= set(kernel_bench.SHAPES.values()), preset

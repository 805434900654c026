# The SM room's contract: registry (program image -> PTX), kernel parameters in constant bank 0, memory spaces, SIMT control,
# special registers, mma fragments, and the faults the hardware raises.
import itertools, os, pathlib, struct, subprocess, sys, numpy as np, pytest
from types import SimpleNamespace
from orin_emu.faults import MMUFault, SMException
from orin_emu.ptx import execute, launch, registry, sm
from orin_emu.ptx.lower import Unsupported
from orin_emu.ptx.testing import DictMemory, Loaded, compilers, nv_cbuf0, SHARED_WINDOW, LOCAL_WINDOW

HEAD = ".version 8.5\n.target sm_87\n.address_size 64\n"

def run(body:str, *bufs:np.ndarray, grid=(1, 1, 1), block=(1, 1, 1), regs:str="", pre:str="", mem=None, shared_bytes=0):
  """Run an entry k(.param .u64 b0, b1, ...) over grid/block; bufs are mapped and read back after the launch."""
  mem = mem or DictMemory()
  vas = []
  for b in bufs:
    va, raw = mem.map(b.nbytes); raw[:b.nbytes] = b.view(np.uint8).reshape(-1); vas.append((va, raw))
  params = ", ".join(f".param .u64 b{i}" for i in range(len(bufs)))
  src = f"{HEAD}{pre}\n.visible .entry k({params})\n{{\n{regs}\n{body}\n}}"
  execute(src, "k", grid=grid, block=block, cbuf0=bytes(0x160) + struct.pack(f"<{len(vas)}Q", *[v for v, _ in vas]), param_base=0x160,
          mem=mem, shared_bytes=shared_bytes, shared_window=SHARED_WINDOW, local_window=LOCAL_WINDOW)
  for b, (_, raw) in zip(bufs, vas): b.view(np.uint8).reshape(-1)[:] = raw[:b.nbytes]
  return [va for va, _ in vas]

TID = ".reg .u32 %t, %c, %n, %v<4>; .reg .u64 %a, %o, %w; .reg .pred %p, %q; .reg .f32 %f<8>;\nmov.u32 %t, %tid.x;\nld.param.u64 %a, [b0];\n"

# ---- registry and parameters
CUDA_SIN = 'extern "C" __global__ void ksin(float* out, const float* in, int n) { int i = threadIdx.x; if (i < n) out[i] = sinf(in[i]) + n; }'

def _cubin(kind, src):
  r, c = compilers()[kind]
  return c.compile_cached(src)

def test_registry_maps_relocated_images_back_to_ptx():
  cubin = _cubin("nv", CUDA_SIN)
  mem = DictMemory()
  x = np.array([0.5, 1e5, -3e7, 2.0], np.float32)
  ref = np.sin(x.astype(np.float64)) + 3
  ref[3] = 0   # i < n guards the last thread
  for _ in range(2):   # two placements: the relocated __cudart_i2opi_f address differs, both images are found
    ld = Loaded(mem, cubin, "ksin")
    (ova, obuf), (iva, ibuf) = mem.map(16), mem.map(16)
    ibuf[:16] = x.view(np.uint8)
    launch(ld.image(), grid=(1, 1, 1), block=(4, 1, 1), cbuf0=nv_cbuf0(cubin, [ova, iva], [3]), shared_bytes=0x400, mem=mem,
           shared_window=SHARED_WINDOW, local_window=LOCAL_WINDOW, program_va=ld.prog_va)
    np.testing.assert_allclose(obuf[:16].view(np.float32), ref, rtol=2e-6, atol=2e-6)
  assert "__cudart_i2opi_f" in registry.lookup(ld.image(), ld.prog_va).globals   # the table is read at its loaded address

def test_registry_survives_disk_cache_hits():
  cubin = _cubin("ptx", ".version VERSION\n.target TARGET\n.address_size 64\n.visible .entry kk(.param .u64 a) { ret; }")
  for table in (registry._by_head, registry._odd, registry._seen, registry._by_va): table.clear()
  again = _cubin("ptx", ".version VERSION\n.target TARGET\n.address_size 64\n.visible .entry kk(.param .u64 a) { ret; }")
  mem = DictMemory()
  ld = Loaded(mem, again, "kk")
  assert registry.lookup(ld.image(), ld.prog_va).name == "kk" and again == cubin

def test_unknown_program_names_its_address():
  with pytest.raises(registry.UnknownProgram, match="0x1234000"):
    launch(np.zeros(256, np.uint8), grid=(1, 1, 1), block=(1, 1, 1), cbuf0=bytes(0x200), shared_bytes=0, mem=DictMemory(),
           shared_window=SHARED_WINDOW, local_window=LOCAL_WINDOW, program_va=0x1234000)

def test_kernel_without_parameters_runs():
  # no EIATTR_PARAM_CBANK in .nv.info.kz: still an entry of the program (tinygrad's Tensor.custom_kernel of an empty sink)
  for kind, src in [("ptx", ".version VERSION\n.target TARGET\n.address_size 64\n.visible .entry kz() { ret; }"),
                    ("nv", 'extern "C" __global__ void kz() {}')]:
    cubin = _cubin(kind, src)
    ld = Loaded(mem:=DictMemory(), cubin, "kz")
    launch(ld.image(), grid=(2, 1, 1), block=(32, 1, 1), cbuf0=nv_cbuf0(cubin, [], []), shared_bytes=0x400, mem=mem,
           shared_window=SHARED_WINDOW, local_window=LOCAL_WINDOW, program_va=ld.prog_va)   # an empty kernel: found, and runs

def test_program_compiled_in_another_process(tmp_path, monkeypatch):
  # BEAM compiles candidates in worker processes that never open a device: their PTX reaches the process that loads the cubin
  root = str(pathlib.Path(__file__).resolve().parents[2])
  src = 'extern "C" __global__ void kx(int* out) { out[threadIdx.x] = threadIdx.x * %d; }' % (os.getpid() * 7 + 3)   # new to this process
  code = ("import sys\nfrom tinygrad.runtime.support.compiler_cuda import NVRTCCompiler\n"
          "sys.stdout.buffer.write(NVRTCCompiler('sm_87', ptx=False).compile(sys.argv[1]))")
  monkeypatch.setattr(registry, "STORE", tmp_path)
  r = subprocess.run([sys.executable, "-c", code, src], capture_output=True, timeout=120, env={**os.environ, "ORIN_EMU": "1",
                     "ORIN_EMU_PTX_DIR": str(tmp_path), "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])})
  assert r.returncode == 0, r.stderr.decode()[-3000:]
  ld, out = Loaded(mem:=DictMemory(), cubin:=r.stdout, "kx"), np.zeros(32, np.int32)
  with pytest.raises(registry.UnknownProgram): registry.lookup(ld.image(), ld.prog_va)
  registry.load(cubin)   # what NVProgram does under ORIN_EMU=1 before it loads a program
  va, raw = mem.map(out.nbytes)
  launch(ld.image(), grid=(1, 1, 1), block=(32, 1, 1), cbuf0=nv_cbuf0(cubin, [va], []), shared_bytes=0x400, mem=mem,
         shared_window=SHARED_WINDOW, local_window=LOCAL_WINDOW, program_va=ld.prog_va)
  np.testing.assert_equal(raw[:out.nbytes].view(np.int32), np.arange(32) * (os.getpid() * 7 + 3))

def test_param_base_is_where_nvprogram_puts_kernargs():
  from tinygrad.device import TinyELF
  from tinygrad.runtime.ops_nv import NVProgram, nv_gpu
  from tinygrad.runtime.support.hcq import HCQBuffer
  for kind, src, name in [("nv", CUDA_SIN, "ksin"), ("ptx", ".version VERSION\n.target TARGET\n.address_size 64\n.visible .entry kp(.param .u64 a, .param .u32 n) { ret; }", "kp")]:
    r, c = compilers()[kind]
    cubin = c.compile_cached(src)
    allocs = []
    dev = SimpleNamespace(renderer=r, iface=SimpleNamespace(compute_class=nv_gpu.AMPERE_COMPUTE_B), synchronize=lambda: None,
                          allocator=SimpleNamespace(alloc=lambda size, spec: allocs.append(size) or HCQBuffer(0x10000000, size), _copyin=lambda b, im: None,
                                                    free=lambda *a: None),
                          shared_mem_window=SHARED_WINDOW, local_mem_window=LOCAL_WINDOW, slm_per_thread=0x1000, _ensure_has_local_memory=lambda x: None, sass_version=0x87,
                          prof_prg_counter=itertools.count())
    prg = NVProgram(dev, TinyELF(cubin, name, r.target, ()))
    # CLikeArgsState writes the buffer addresses right after the cbuf_0 prefix
    assert registry.register(cubin, b"") == [] and registry.lookup(bytes(Loaded(DictMemory(), cubin, name).image()), 0).param_base == len(prg.cbuf_0) * 4

# ---- memory spaces and vector accesses
def test_vector_loads_stores_and_generic_addressing():
  buf = np.arange(16, dtype=np.float32)
  run(TID + """mul.wide.u32 %o, %t, 16; add.u64 %o, %o, %a;
  ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%o];
  st.global.v4.f32 [%o], {%f3, %f2, %f1, %f0};
  ld.v2.f32 {%f4, %f5}, [%o+8];
  add.f32 %f4, %f4, %f5; st.f32 [%o], %f4;""", buf, block=(4, 1, 1))
  exp = np.arange(16, dtype=np.float32).reshape(4, 4)[:, ::-1].copy()
  exp[:, 0] = exp[:, 2] + exp[:, 3]
  np.testing.assert_array_equal(buf.reshape(4, 4), exp)

def test_shared_memory_is_per_cta_with_barrier_reduction():
  out = np.zeros(6, np.float32)
  body = TID + """.reg .u64 %s, %sa; .reg .u32 %cta;
  mov.u32 %cta, %ctaid.x;
  mov.u64 %s, red;
  cvt.rn.f32.u32 %f0, %t; cvt.rn.f32.u32 %f1, %cta; fma.rn.f32 %f0, %f1, 100.0, %f0;
  mul.wide.u32 %sa, %t, 4; add.u64 %sa, %sa, %s; st.shared.f32 [%sa], %f0;
  bar.sync 0;
  setp.ne.u32 %p, %t, 0; @%p bra DONE;
  mov.f32 %f2, 0f00000000; mov.u32 %n, 0;
LOOP:
  mul.wide.u32 %sa, %n, 4; add.u64 %sa, %sa, %s; ld.shared.f32 %f3, [%sa]; add.f32 %f2, %f2, %f3;
  add.u32 %n, %n, 1; setp.lt.u32 %q, %n, 32; @%q bra LOOP;
  mul.wide.u32 %o, %cta, 4; add.u64 %o, %o, %a; st.global.f32 [%o], %f2;
DONE:
  ret;"""
  run(body, out, grid=(6, 1, 1), block=(32, 1, 1), pre=".shared .align 4 .b8 red[128];")
  np.testing.assert_array_equal(out, [100 * 32 * c + 496 for c in range(6)])

def test_local_memory_is_per_thread_and_window_generic():
  out = np.zeros(8, np.uint32)
  body = TID + """.local .align 8 .b8 depot[16]; .reg .u64 %l, %g;
  mov.u64 %l, depot; cvta.local.u64 %g, %l;
  st.local.u32 [%l+4], %t;
  mul.lo.u32 %v0, %t, 3; st.u32 [%g+8], %v0;
  ld.local.u32 %v1, [%l+8]; ld.u32 %v2, [%g+4]; add.u32 %v3, %v1, %v2;
  mul.wide.u32 %o, %t, 4; add.u64 %o, %o, %a; st.global.u32 [%o], %v3;"""
  run(body, out, block=(8, 1, 1))
  assert list(out) == [4 * t for t in range(8)]

def test_generic_access_inside_shared_window_reads_shared_memory():
  out = np.zeros(2, np.uint32)
  body = TID + """.shared .align 4 .b8 sm[8]; .reg .u64 %s, %g;
  mov.u64 %s, sm; st.shared.u32 [%s+4], 77; cvta.shared.u64 %g, %s;
  ld.global.u32 %v0, [%g+4]; ld.u32 %v1, [%g+4]; st.global.u32 [%a], %v0; st.global.u32 [%a+4], %v1;"""
  run(body, out)
  assert list(out) == [77, 77]

def test_predicated_loads_skip_inactive_lanes():
  out = np.zeros(4, np.float32)
  body = TID + """mul.wide.u32 %o, %t, 4; add.u64 %w, %o, %a;
  setp.lt.u32 %p, %t, 2; mov.f32 %f0, 0f40400000;
  @%p ld.global.f32 %f0, [%w];
  @!%p mov.u64 %w, 0; @%p bra ST;
  add.u64 %w, %o, %a;
ST:
  add.f32 %f0, %f0, 0f3F800000; st.global.f32 [%w], %f0;"""
  out[:] = [10, 20, 30, 40]
  run(body, out, block=(4, 1, 1))
  assert list(out) == [11, 21, 4, 4]

# ---- SIMT control flow
def test_divergent_nested_loops_reconverge():
  out = np.zeros(16, np.uint32)
  body = TID + """mov.u32 %v0, 0; mov.u32 %n, 0;
OUTER:
  setp.ge.u32 %p, %n, %t; @%p bra END;
  mov.u32 %c, 0;
INNER:
  add.u32 %v0, %v0, %c; add.u32 %c, %c, 1; setp.lt.u32 %q, %c, %n; @%q bra INNER;
  add.u32 %n, %n, 1; bra.uni OUTER;
END:
  and.b32 %v1, %t, 1; setp.eq.u32 %p, %v1, 0; @%p bra EVEN;
  add.u32 %v0, %v0, 1000; bra.uni JOIN;
EVEN:
  add.u32 %v0, %v0, 2000;
JOIN:
  mul.wide.u32 %o, %t, 4; add.u64 %o, %o, %a; st.global.u32 [%o], %v0;"""
  run(body, out, block=(16, 1, 1))
  ref = [sum(sum(range(max(n, 1))) for n in range(t)) + (2000 if t % 2 == 0 else 1000) for t in range(16)]
  assert list(out) == ref

def test_uniform_values_stay_scalar_until_threads_diverge(monkeypatch):
  # a loop every thread runs alike costs scalar numpy ops, not ops over all lanes: those drop the GIL, and beside tinygrad's HCQ wait
  # spinning on an idle machine every drop cost the interpreter a switch interval (upstream test_masked_select: 16x slower, 30 min)
  batches, real = [], sm.CTABatch
  monkeypatch.setattr(sm, "CTABatch", lambda *a: batches.append(real(*a)) or batches[-1])
  out = np.zeros(64, np.uint32)
  body = TID + """mov.u32 %v0, 0; mov.u32 %c, 0;
LOOP:
  add.u32 %v0, %v0, %c; add.u32 %c, %c, 1; setp.lt.u32 %q, %c, 10; @%q bra LOOP;
  setp.lt.u32 %p, %t, 8; @%p mov.u32 %v0, %t;
  mul.wide.u32 %o, %t, 4; add.u64 %o, %o, %a; st.global.u32 [%o], %v0;"""
  run(body, out, block=(64, 1, 1))
  assert list(out) == list(range(8)) + [45] * 56   # the threads that skipped the guarded mov still read the shared sum
  st = batches[0]
  held, lanes = ({r.name for r in st.prg.mod.regs if c(r.rid)} for c in (lambda i: i in st.U, lambda i: st.R[i] is not None))
  assert {"%a", "%c", "%q", "%n"} <= held and not held & {"%t", "%p", "%o", "%v0"}   # %n: no thread wrote it, all hold zero
  assert lanes == {"%t", "%p", "%o", "%v0"}

def test_early_exit_threads_leave_barrier_to_the_rest():
  out = np.zeros(8, np.uint32)
  body = TID + """.shared .align 4 .b8 sm[32]; .reg .u64 %s;
  setp.ge.u32 %p, %t, 4; @%p bra EXIT;
  mov.u64 %s, sm; mul.wide.u32 %o, %t, 4; add.u64 %s, %s, %o; st.shared.u32 [%s], %t;
  bar.sync 0;
  mov.u64 %s, sm; ld.shared.u32 %v0, [%s+12]; add.u64 %o, %o, %a; st.global.u32 [%o], %v0;
EXIT:
  ret;"""
  run(body, out, block=(8, 1, 1))
  assert list(out) == [3, 3, 3, 3, 0, 0, 0, 0]

def test_barrier_waits_for_threads_that_skip_it():
  # bar.sync counts non-exited threads: thread 0 skips the barrier, stores after a loop and exits before the others read
  out = np.zeros(4, np.uint32)
  body = TID + """.shared .align 4 .b8 sm[4]; .reg .u64 %s;
  mov.u64 %s, sm; setp.ne.u32 %p, %t, 0; @%p bra WAIT;
  mov.u32 %c, 0;
SPIN:
  add.u32 %c, %c, 1; setp.lt.u32 %q, %c, 50; @%q bra SPIN;
  st.shared.u32 [%s], %c; bra.uni OUT;
WAIT:
  bar.sync 0;
  ld.shared.u32 %v0, [%s]; mul.wide.u32 %o, %t, 4; add.u64 %o, %o, %a; st.global.u32 [%o], %v0;
OUT:
  ret;"""
  run(body, out, block=(4, 1, 1))
  assert list(out) == [0, 50, 50, 50]

def test_call_uni_passes_params():
  out = np.zeros(4, np.uint32)
  pre = """.func (.param .b32 ret0) twice(.param .b32 x)
{ .reg .b32 %r<2>; ld.param.b32 %r0, [x]; shl.b32 %r1, %r0, 1; st.param.b32 [ret0], %r1; ret; }"""
  body = TID + """{ .param .b32 arg0; st.param.b32 [arg0], %t; .param .b32 rv; call.uni (rv), twice, (arg0); ld.param.b32 %v0, [rv]; }
  mul.wide.u32 %o, %t, 4; add.u64 %o, %o, %a; st.global.u32 [%o], %v0;"""
  run(body, out, block=(4, 1, 1), pre=pre)
  assert list(out) == [0, 2, 4, 6]
  guarded = body.replace("call.uni (rv), twice, (arg0);", "setp.lt.u32 %p, %t, 2; st.param.b32 [rv], 7; @%p call.uni (rv), twice, (arg0);")
  run(guarded, out, block=(4, 1, 1), pre=pre)
  assert list(out) == [0, 2, 7, 7]

def test_special_registers_3d():
  grid, block = (3, 2, 2), (4, 2, 3)
  T, G = 24, 12
  out = np.zeros((G * T, 8), np.uint32)
  names = ["%tid.x", "%tid.y", "%tid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z", "%laneid", "%ntid.z"]
  body = TID.replace("mov.u32 %t, %tid.x;", "") + """.reg .u32 %x, %y, %z, %lin, %cl, %tmp;
  mov.u32 %x, %tid.x; mov.u32 %y, %tid.y; mov.u32 %z, %tid.z;
  mad.lo.u32 %lin, %z, 2, %y; mad.lo.u32 %lin, %lin, 4, %x;
  mov.u32 %cl, %ctaid.z; mov.u32 %tmp, %ctaid.y; mad.lo.u32 %cl, %cl, 2, %tmp; mov.u32 %tmp, %ctaid.x; mad.lo.u32 %cl, %cl, 3, %tmp;
  mad.lo.u32 %lin, %cl, 24, %lin; mul.wide.u32 %o, %lin, 32; add.u64 %o, %o, %a;
""" + "\n".join(f"mov.u32 %tmp, {n}; st.global.u32 [%o+{4*i}], %tmp;" for i, n in enumerate(names))
  run(body, out, grid=grid, block=block)
  g = np.arange(G); t = np.arange(T)
  gi, ti = np.meshgrid(g, t, indexing="ij")
  ref = np.stack([ti % 4, (ti // 4) % 2, ti // 8, gi % 3, (gi // 3) % 2, gi // 6, ti % 32, np.full_like(ti, 3)], -1).reshape(-1, 8)
  np.testing.assert_array_equal(out, ref)

# ---- mma.sync against the ISA fragment tables, computed independently here from the tables' row/col formulas
@pytest.mark.parametrize("shape,dt,acc", [("m16n8k16", "f16", "f32"), ("m16n8k16", "bf16", "f32"), ("m16n8k8", "f16", "f32"),
                                          ("m16n8k16", "f16", "f16"), ("m16n8k8", "tf32", "f32")])
def test_mma_fragments(shape, dt, acc):
  K = 16 if shape == "m16n8k16" else 8
  rng = np.random.default_rng(3)
  A, B, C = rng.standard_normal((16, K)), rng.standard_normal((K, 8)), rng.standard_normal((16, 8)).astype(np.float32)
  per = 1 if dt == "tf32" else 2   # elements per 32-bit register
  enc = {"f16": lambda x: x.astype(np.float16).view(np.uint16).astype(np.uint32), "bf16": lambda x: x.astype(np.float32).view(np.uint32) >> 16,
         "tf32": lambda x: x.astype(np.float32).view(np.uint32)}[dt]
  dec = {"f16": lambda u: u.astype(np.uint16).view(np.float16).astype(np.float64), "bf16": lambda u: (u << 16).view(np.float32).astype(np.float64),
         "tf32": lambda u: (u & 0xFFFFE000).view(np.float32).astype(np.float64)}[dt]
  Ae, Be = enc(A), enc(B)
  na, nb, nc = 16 * K // 32 // per, K * 8 // 32 // per, 4 if acc == "f32" else 2
  fr = np.zeros((32, na + nb + nc), np.uint32)
  for lane in range(32):
    g, t = lane // 4, lane % 4
    for i in range(na * per):
      if dt == "tf32": r, c = g + 8 * (i % 2), t + 4 * (i >= 2)   # a0 (g,t) a1 (g+8,t) a2 (g,t+4) a3 (g+8,t+4)
      else: r, c = g + 8 * ((i % 4) >= 2), 2 * t + (i % 2) + 8 * (i >= 4)   # row g (+8 for i%4 >= 2), col 2t + i%2 (+8 for i >= 4)
      fr[lane, i // per] |= Ae[r, c] << np.uint32(16 * (i % per))
    for i in range(nb * per):
      r = t + 4 * i if dt == "tf32" else 2 * t + (i % 2) + 8 * (i >= 2)   # col g
      fr[lane, na + i // per] |= Be[r, g] << np.uint32(16 * (i % per))
    for i in range(4):
      cv = C[g + 8 * (i >= 2), 2 * t + (i % 2)]
      if acc == "f32": fr[lane, na + nb + i] = cv.view(np.uint32)
      else: fr[lane, na + nb + i // 2] |= np.uint32(np.float16(cv).view(np.uint16)) << np.uint32(16 * (i % 2))
  nr = na + nb + nc
  body = TID + f".reg .b32 %r<{nr}>;\nmul.wide.u32 %o, %t, {4 * nr}; add.u64 %o, %o, %a;\n" + "".join(f"ld.global.b32 %r{i}, [%o+{4*i}];" for i in range(nr))
  regs = lambda lo, n: "{" + ", ".join(f"%r{lo + i}" for i in range(n)) + "}"
  body += f"\nmma.sync.aligned.{shape}.row.col.{acc}.{dt}.{dt}.{acc} {regs(na + nb, nc)}, {regs(0, na)}, {regs(na, nb)}, {regs(na + nb, nc)};\n"
  body += "".join(f"st.global.b32 [%o+{4*(na + nb + i)}], %r{na + nb + i};" for i in range(nc))
  run(body, fr, block=(32, 1, 1))
  D = np.zeros((16, 8))
  for lane in range(32):
    g, t = lane // 4, lane % 4
    for i in range(4):
      v = fr[lane, na + nb + i].view(np.float32) if acc == "f32" else np.uint16(fr[lane, na + nb + i // 2] >> np.uint32(16 * (i % 2))).view(np.float16)
      D[g + 8 * (i >= 2), 2 * t + (i % 2)] = v
  Cin = C.astype(np.float16).astype(np.float64) if acc == "f16" else C
  np.testing.assert_allclose(D, dec(Ae) @ dec(Be) + Cin, rtol=1e-5 if acc == "f32" else 2e-3, atol=1e-5 if acc == "f32" else 1e-2)

# ---- faults
def test_misaligned_access_raises_misaligned_address():
  with pytest.raises(SMException) as e: run(TID + "ld.global.u32 %v0, [%a+2];", np.zeros(4, np.uint32))
  assert e.value.warp_esr == 0xF and e.value.va % 4 == 2 and e.value.global_esr == 4
  with pytest.raises(SMException) as e: run(TID + "ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%a+8];", np.zeros(8, np.float32))
  assert e.value.warp_esr == 0xF

def test_unmapped_access_is_an_mmu_fault_with_its_va():
  mem = DictMemory()
  with pytest.raises(MMUFault) as e: run(TID + "ld.global.u32 %v0, [%a+65536];", np.zeros(4, np.uint32), mem=mem)
  assert e.value.va == mem.bases[0] + 65536 and e.value.access == "virt read"
  with pytest.raises(MMUFault) as e: run(TID + "st.global.u32 [%a+65536], 1;", np.zeros(4, np.uint32), mem=DictMemory())
  assert e.value.access == "virt write"

def test_buffer_inside_shared_window_is_invalid_address_space():
  # the fault seen on an Orin (OBSERVED.md, "a buffer in the shared-memory window"): a buffer mapped 2 MiB into the shared window is
  # read as shared memory, past its end
  mem = DictMemory()
  mem.map_at(SHARED_WINDOW + 0x200000, np.zeros(0x1000, np.uint8))
  body = ".reg .u64 %a; .reg .f32 %f;\nmov.u64 %a, " + str(SHARED_WINDOW + 0x200000) + ";\nld.global.f32 %f, [%a];"
  with pytest.raises(SMException) as e: run(body, mem=mem, shared_bytes=0x400)
  assert e.value.warp_esr == 0x10 and e.value.global_esr == 4 and e.value.va == SHARED_WINDOW + 0x200000

def test_trap_is_an_sm_exception():
  regs = ".reg .u32 %t; .reg .pred %p;\nmov.u32 %t, %tid.x;\n"
  run(regs + "setp.gt.u32 %p, %t, 64;\n@%p trap;", block=(32, 1, 1))   # no thread takes the trap: nothing happens
  with pytest.raises(SMException) as e: run(regs + "setp.eq.u32 %p, %t, 3;\n@%p trap;", block=(32, 1, 1))
  assert e.value.global_esr == 0x10 and e.value.warp_esr == 0 and "trap" in str(e.value)

def test_shared_access_out_of_range():
  with pytest.raises(SMException) as e: run(".reg .u32 %s; mov.u32 %s, 4096; st.shared.u32 [%s], 1;", shared_bytes=0x400)
  assert e.value.warp_esr == 0xE
  with pytest.raises(SMException) as e: run(".reg .u64 %s; .reg .u32 %v; mov.u64 %s, 0; ld.shared.u8 %v, [%s+-1];", shared_bytes=0x400)
  assert e.value.warp_esr == 0xE   # an offset below the CTA's shared memory wraps to the top of the address space, not into the last byte

def test_support_finds_nvrtc_as_users_do():
  # NVRTC and nvJitLink come from the environment, as for users (the venv's .pth from scripts/setup, the Nix package or shell),
  # so the test support must not reach for the pip wheels itself: under Nix there are none
  root = str(pathlib.Path(__file__).resolve().parents[2])
  code = ("import sys; sys.modules['nvidia'] = None\nimport orin_emu.ptx.testing, orin_emu.ptx.device\n"
          "from orin_emu.ptx.testing import compilers\nassert compilers()['nv'][1].compile('extern \"C\" __global__ void k() {}')")
  r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                     env={**os.environ, "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])})
  assert r.returncode == 0, r.stderr[-3000:]

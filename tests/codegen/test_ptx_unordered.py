# PTXRenderer's float != and float->bool must follow IEEE/C semantics: NaN != NaN is true (isnan is x != x), -0.0 is false.
# PTX's setp.ne is an ordered comparison (false when either side is NaN) and setp.ne.b32 compares bits, so both need the unordered
# float form. Run on the emulated SM, which follows the PTX ISA, from kernels rendered by PTXRenderer("sm_87"): no GPU needed.
import numpy as np
from tinygrad import Tensor, dtypes
from orin_emu.ptx.testing import Runner

X = np.array([np.nan, -0.0, 0.0, 1.5, -np.inf], dtype=np.float32)

def run(fn, dtype=dtypes.float32):
  t = Tensor.empty(len(X), dtype=dtype, device="NULL")
  return Runner("ptx").realize(fn(t), {t: X.astype(dtype.fmt and np.dtype(dtype.fmt))})

def test_isnan_is_true_for_nan():
  np.testing.assert_array_equal(run(lambda t: t.isnan()), np.isnan(X))

def test_not_equal_to_itself_only_for_nan():
  np.testing.assert_array_equal(run(lambda t: t != t), X != X)

def test_float_to_bool_is_false_for_negative_zero():
  np.testing.assert_array_equal(run(lambda t: t.cast(dtypes.bool)), X.astype(bool))

def test_half_to_bool_is_false_for_negative_zero():
  np.testing.assert_array_equal(run(lambda t: t.cast(dtypes.bool), dtypes.half), X.astype(np.float16).astype(bool))

# pytest plugin for suites on the emulated Orin (-p orin_emu.hang_report): a test that failed on an HCQ signal wait that ran out gets
# the emulated GPU's state at that moment as a report section: a launch still executing in the SM room (the interpreter being slow), a
# channel parked on an acquire nothing will release, or an engine thread that died, instead of a bare timeout.
import pytest
from orin_emu.kernel import core

def timed_out(e:BaseException|None) -> bool:
  while e is not None:
    if "Wait timeout" in str(e): return True
    e = e.__cause__ or e.__context__
  return False

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
  rep = (yield).get_result()
  if rep.failed and call.excinfo is not None and timed_out(call.excinfo.value) and (k:=core._kernel) is not None and k.gpu is not None:
    rep.sections.append(("emulated Orin GPU after the wait timed out", k.gpu.describe()))

# tests/ is the import root of our test helpers (orin_emu, ...), whichever subfolder a test lives in
import sys, pathlib
if (tests:=str(pathlib.Path(__file__).resolve().parent)) not in sys.path: sys.path.insert(0, tests)

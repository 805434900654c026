# tests/ (our test helpers) and the clone (orin_emu) are import roots, whichever subfolder a test lives in
import sys, pathlib
for p in (str(pathlib.Path(__file__).resolve().parent), str(pathlib.Path(__file__).resolve().parents[1])):
  if p not in sys.path: sys.path.insert(0, p)

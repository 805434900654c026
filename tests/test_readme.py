# README.md reads in a terminal or a diff without wrapping, and keeps naming how to run the project.
from pathlib import Path
README = (Path(__file__).resolve().parent.parent/"README.md").read_text()

def test_lines_fit_120_columns():
  assert [l for l in README.splitlines() if len(l) > 120] == []

def test_names_how_to_run():
  assert all(s in README for s in ("DEV=NV", "scripts/run", "scripts/test", "--serve"))

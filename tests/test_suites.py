# scripts/suites.py: the counts CI prints come from each suite's junit report, and listed upstream failures are deselected, not lost.
import re, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT/"scripts"))
import suites

def test_counts_pass_fail_skip(tmp_path):
  (tmp_path/"test_x.py").write_text("import pytest\ndef test_a(): pass\ndef test_b(): assert 0\n@pytest.mark.skip('why')\ndef test_c(): pass\n")
  assert suites.run(suites.Suite("x", ["test_x.py"], cwd=tmp_path), tmp_path/"r.xml")[:3] == (1, 1, 1)

def test_a_suite_that_dies_counts_as_a_failure(tmp_path):
  assert suites.run(suites.Suite("x", ["--no-such-option"], cwd=tmp_path), tmp_path/"r.xml")[1] == 1

def test_known_failures_are_deselected(tmp_path, monkeypatch):
  (tmp_path/"test_x.py").write_text("def test_a(): pass\ndef test_b(): assert 0\n")
  (kf:=tmp_path/"tests"/"upstream").mkdir(parents=True)
  (kf/"known_failures.txt").write_text("# c\nx | test_x.py::test_b | fails on the base too\n")
  monkeypatch.setattr(suites, "ROOT", tmp_path)
  assert suites.known_failures("x") == [("test_x.py::test_b", "fails on the base too")]
  assert suites.run(suites.Suite("x", ["test_x.py"], cwd=tmp_path, upstream=True), tmp_path/"r.xml")[:3] == (1, 0, 0)

def test_a_command_suite_counts_its_exit(tmp_path):
  assert suites.run(suites.Suite("x", ["true"], cwd=tmp_path, pytest=False), tmp_path/"r.xml")[:3] == (1, 0, 0)
  assert suites.run(suites.Suite("x", ["false"], cwd=tmp_path, pytest=False), tmp_path/"r.xml")[:3] == (0, 1, 0)

def test_upstream_llm_suite_has_every_llm_test_file():
  files = {str(p.relative_to(suites.MASTER)) for p in (suites.MASTER/"test").rglob("test_*.py")
           if re.search(r"^\s*(from|import) tinygrad\.llm", p.read_text(), re.M)}
  assert files and files == set(suites.UPSTREAM_LLM)

def test_every_known_failure_names_a_suite():
  names = {s.name for s in suites.SUITES}
  assert all(line.split("|")[0].strip() in names for line in (ROOT/"tests"/"upstream"/"known_failures.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#"))

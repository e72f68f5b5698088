"""The corpus's made files (broken/, encodings/) are what tests/data/make_corpus.py makes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "corpus"


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_script_makes_exactly_the_committed_files(tmp_path):
    subprocess.run([sys.executable, str(DATA / "make_corpus.py"), "--out", str(tmp_path)], check=True, capture_output=True)
    made = _tree(tmp_path)
    committed = {name: digest for name, digest in _tree(CORPUS).items() if name.split("/")[0] in ("broken", "encodings")}
    assert made == committed
    assert len(made) == 10


def test_every_pdf_sample_is_listed_in_files_json_with_its_licence():
    samples = CORPUS / "pdf-samples"
    listed = {entry["path"] for entry in json.loads((samples / "files.json").read_text())["data"]}
    on_disk = {str(p.relative_to(samples)) for p in samples.rglob("*.pdf")}
    assert on_disk and on_disk <= listed
    assert "Attribution-ShareAlike 4.0" in (samples / "LICENSE").read_text()

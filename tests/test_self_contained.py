"""A clone with nothing beside it passes its tests: no tracked file reads a folder next to the repository.

The test corpus lives in tests/data/corpus. A path into a folder beside the repository (the corpus
used to live in one) would make a bare clone fail; README.md is checked too.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_OUTSIDE = "shared"  # spelled once, so this file does not match its own patterns
PATTERNS = [f"../{_OUTSIDE}", f'"{_OUTSIDE}" / "corpus"', f'parent / "{_OUTSIDE}"', f"{_OUTSIDE}/corpus"]


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    return [name for name in listed.decode().split("\0") if name]


def test_no_tracked_file_points_outside_the_repository():
    found = []
    for name in _tracked():
        try:
            data = (ROOT / name).read_bytes()
        except (FileNotFoundError, IsADirectoryError):  # deleted in the work tree, or a submodule
            continue
        if b"\0" in data[:8192]:  # binary: PDFs, models, pictures
            continue
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            found += [f"{name}:{number}: {pattern}" for pattern in PATTERNS if pattern in line]
    assert not found, "paths outside the repository:\n" + "\n".join(found)


def test_the_corpus_is_inside_the_repository(corpus):
    assert corpus.resolve().is_relative_to(ROOT) and (corpus / "pdf-samples" / "files.json").is_file()

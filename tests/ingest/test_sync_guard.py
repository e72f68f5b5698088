"""A watched folder that lost its files in one sync (an unmounted drive is an empty directory)
keeps its documents until the user confirms; a file or two deleted on purpose is removed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ingest.pipeline import Ingestor
from ingest.store.library import Library
from tests.conftest import ROOT

pytestmark = pytest.mark.models

TEXTS = {
    "kettle.txt": "The kettle whistles when the water boils on the stove.",
    "cats.txt": "Cats sleep peacefully beside warm fireplaces in winter.",
    "tides.txt": "Tides rise and fall twice a day with the pull of the moon.",
}


def _fill(folder):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in TEXTS.items():
        (folder / name).write_text(text, encoding="utf-8")


@pytest.fixture
def library(tmp_path):
    lib = Library(tmp_path / "lib")
    yield lib
    lib.close()


@pytest.fixture
def mounted(tmp_path):
    """A real tmpfs mounted at a folder; skipped where this process may not mount."""
    point = tmp_path / "drive"
    point.mkdir()
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(point)], capture_output=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount here: {result.stderr.decode().strip()}")
    yield point
    subprocess.run(["umount", str(point)], capture_output=True)


def test_an_unmounted_drive_keeps_its_documents_until_confirmed(library, embedder, mounted):
    _fill(mounted)
    assert len(Ingestor(library, embedder).add([mounted]).added) == 3
    subprocess.run(["umount", str(mounted)], check=True)
    assert mounted.is_dir() and not any(mounted.iterdir())  # what is left: an empty mount point
    report = Ingestor(library, embedder).sync()
    assert report.removed == [] and report.held == [{"path": str(mounted), "gone": 3, "files": 3}]
    assert len(library.documents()) == 3
    confirmed = Ingestor(library, embedder).sync(confirm_removals=True)
    assert len(confirmed.removed) == 3 and library.documents() == []


def test_most_files_gone_at_once_is_held_and_one_deleted_file_is_removed(library, embedder, tmp_path):
    folder = tmp_path / "notes"
    _fill(folder)
    for n in range(3):
        (folder / f"extra-{n}.txt").write_text(f"Note {n} about lighthouses and harbour {n}.", encoding="utf-8")
    Ingestor(library, embedder).add([folder])
    (folder / "kettle.txt").unlink()
    one = Ingestor(library, embedder).sync()
    assert [r["path"] for r in one.removed] == [str(folder / "kettle.txt")] and one.held == []
    for name in ("cats.txt", "tides.txt", "extra-0.txt", "extra-1.txt"):
        (folder / name).unlink()
    most = Ingestor(library, embedder).sync()  # 4 of 5 gone in one sync
    assert most.removed == [] and most.held[0]["gone"] == 4 and len(library.documents()) == 5


def test_the_command_line_says_what_it_kept_and_exits_1(tmp_path):
    folder, home = tmp_path / "notes", tmp_path / "lib"
    _fill(folder)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "DOCDESK_HOME": str(home)}

    def docdesk(*args):
        return subprocess.run(
            [sys.executable, "-m", "app", "--json", *args], cwd=ROOT, env=env, capture_output=True, text=True
        )

    assert docdesk("add", str(folder)).returncode == 0
    for name in TEXTS:
        (folder / name).unlink()
    held = docdesk("sync")
    assert held.returncode == 1, held.stderr
    assert json.loads(held.stdout)["held"] == [{"path": str(folder), "gone": 3, "files": 3}]
    assert len(json.loads(docdesk("list").stdout)["documents"]) == 3
    confirmed = docdesk("sync", "--confirm-removals")
    assert confirmed.returncode == 0 and len(json.loads(confirmed.stdout)["removed"]) == 3

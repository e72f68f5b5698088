"""The exit-code table under real conditions, through the CLI as a real subprocess: a library on
a tmpfs that fills up, a read-only mount, a meta table with a bad schema version, a database page
overwritten with garbage. Never a traceback; 2 for a library error, 3 for a full disk or a
read-only library."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.models  # `add` embeds with the bundled model

NOTES = {
    "kettle.md": "# Kettles\n\nThe kettle whistles when the water boils on the stove.",
    "tides.md": "# Tides\n\nTides rise and fall twice a day with the pull of the moon.",
}


def docdesk(library: Path, *args: str, code: int, config: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, DOCDESK_HOME=str(library), DOCDESK_LOG_DIR=str(library.parent / "logs"))
    env["DOCDESK_CONFIG"] = str(config or library.parent / "no-config.toml")
    proc = subprocess.run(
        [sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    """The reason a failed command gave: one `docdesk:` line on stderr, nothing on stdout."""
    errors = [line for line in proc.stderr.splitlines() if line.startswith("docdesk: ")]
    assert len(errors) == 1 and proc.stdout == "", proc.stderr
    return errors[0]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A small library with two notes, built once and copied by each test."""
    base = tmp_path_factory.mktemp("template")
    notes = base / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    docdesk(base / "lib", "add", str(notes), code=0)
    return base / "lib"


def copy_library(template: Path, target: Path, cache: bool = True) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for item in template.iterdir():
        if item.is_file() and (cache or item.name != "vectors.faiss"):
            shutil.copy2(item, target / item.name)
    return target


@pytest.fixture
def tmpfs(tmp_path):
    """mount(name, size) -> a real tmpfs at tmp_path/name; skipped where this process may not mount."""
    points: list[Path] = []

    def mount(name: str, size: str) -> Path:
        point = tmp_path / name
        point.mkdir()
        if os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("mounting a tmpfs needs root on Linux")
        result = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)], capture_output=True
        )
        if result.returncode != 0:
            pytest.skip(f"cannot mount here: {result.stderr.decode().strip()}")
        points.append(point)
        return point

    yield mount
    for point in points:
        subprocess.run(["umount", "-l", str(point)], capture_output=True)


def free_bytes(folder: Path) -> int:
    stat = os.statvfs(folder)
    return stat.f_bavail * stat.f_frsize


def fill(folder: Path, leave: int) -> None:
    """Fill the disk holding `folder` until `leave` bytes are free."""
    with open(folder / "filler", "ab") as handle:
        try:
            handle.write(b"\0" * max(0, free_bytes(folder) - leave))
            handle.flush()
        except OSError:
            pass
    assert free_bytes(folder) <= max(leave, 4096)


def test_a_full_disk_exits_3_and_keeps_the_library(tmp_path, template, tmpfs):
    lib = copy_library(template, tmpfs("full", "2m"))
    big = tmp_path / "handbook.md"  # ~110 passages: far more than the space left
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    big.write_text("\n\n".join(f"# Part {n}\n\n{readme}" for n in range(3)), encoding="utf-8")
    fill(lib, leave=64 * 1024)

    added = docdesk(lib, "add", str(big), "--json", code=3)
    assert one_line_error(added) == (
        f"docdesk: the disk holding the library ({lib}) is full: free space and run again — nothing was lost"
    )

    listed = json.loads(docdesk(lib, "list", "--json", code=0).stdout)["documents"]
    indexed = {Path(d["path"]).name for d in listed if d["status"] == "indexed"}
    assert indexed == set(NOTES)  # what was there before; the big file is at most queued, to resume

    (lib / "vectors.faiss").unlink()
    fill(lib, leave=0)  # not a byte left: the cache cannot be written, searching still works
    found = json.loads(docdesk(lib, "search", "when", "does", "the", "kettle", "whistle", "--json", code=0).stdout)
    assert Path(found["results"][0]["path"]).name == "kettle.md"
    assert not (lib / "vectors.faiss").exists()
    config = tmp_path / "fake.toml"
    config.write_text('[llm]\nbackend = "fake"\n', encoding="utf-8")
    asked = docdesk(lib, "ask", "when", "does", "the", "kettle", "whistle?", code=0, config=config)
    assert "Fake reply" in asked.stdout and "chat not saved: the disk holding the library" in asked.stderr
    kettle = next(d["doc_id"] for d in listed if d["path"].endswith("kettle.md"))
    assert docdesk(lib, "remove", kettle, code=3).stderr.startswith("docdesk: the disk holding the library")


@pytest.fixture
def read_only_library(tmp_path, template, tmpfs):
    """The template on a tmpfs remounted read-only (root ignores permission bits)."""
    lib = copy_library(template, tmpfs("ro", "8m"), cache=False)  # no cache: it must be built in memory
    result = subprocess.run(["mount", "-o", "remount,ro", str(lib)], capture_output=True)
    if result.returncode != 0:
        pytest.skip(f"cannot remount read-only here: {result.stderr.decode().strip()}")
    try:
        (lib / "probe").write_text("x")
    except OSError:
        return lib
    pytest.skip("this process can still write to a read-only mount")


def test_a_read_only_library_serves_list_search_and_ask(tmp_path, read_only_library):
    lib = read_only_library
    listed = json.loads(docdesk(lib, "list", "--json", code=0).stdout)["documents"]
    assert {Path(d["path"]).name for d in listed} == set(NOTES)
    found = json.loads(docdesk(lib, "search", "pull", "of", "the", "moon", "--json", code=0).stdout)
    assert Path(found["results"][0]["path"]).name == "tides.md"

    config = tmp_path / "fake.toml"
    config.write_text('[llm]\nbackend = "fake"\n', encoding="utf-8")
    asked = docdesk(lib, "ask", "what", "makes", "tides", "rise?", code=0, config=config)
    assert "Fake reply" in asked.stdout and f"chat not saved: the library at {lib} is read-only" in asked.stderr
    tides = next(d["doc_id"] for d in listed if d["path"].endswith("tides.md"))
    summary = docdesk(lib, "summarize", tides, code=0, config=config)  # its steps are not cached
    assert summary.stdout.strip() and "summary steps are not cached" in summary.stderr

    message = f"docdesk: the library at {lib} is read-only: search, list, ask and summarize work, "
    message += "add, remove and sync need write access"
    note = tmp_path / "new.md"
    note.write_text("# New\n\nA note that cannot be added.", encoding="utf-8")
    assert one_line_error(docdesk(lib, "add", str(note), code=3)) == message
    kettle = next(d["doc_id"] for d in listed if d["path"].endswith("kettle.md"))
    assert one_line_error(docdesk(lib, "remove", kettle, code=3)) == message
    assert sorted(p.name for p in lib.iterdir()) == ["library.sqlite"]  # nothing was written


def test_a_schema_version_that_is_not_a_number_is_a_library_error(tmp_path, template):
    lib = copy_library(template, tmp_path / "lib")
    with sqlite3.connect(lib / "library.sqlite") as conn:
        conn.execute("UPDATE meta SET value = 'abc' WHERE key = 'schema_version'")
    for command in (["list"], ["search", "kettle"], ["add", str(tmp_path)]):
        line = one_line_error(docdesk(lib, *command, code=2))
        assert line.startswith("docdesk: the library database is damaged (its schema version is 'abc', not a number)")
        assert "`docdesk repair`" in line


def overwrite_page(db: Path, table: str, page: bytes) -> None:
    """Overwrite the root page of `table` in the database file with `page`."""
    with sqlite3.connect(db) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        number = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    assert len(page) == size
    with open(db, "r+b") as handle:
        handle.seek((number - 1) * size)
        handle.write(page)


def empty_leaf_page(size: int = 4096) -> bytes:
    """Garbage that reads as a valid empty table page: SQLite raises nothing, the table looks empty."""
    page = bytearray(size)
    page[0] = 0x0D
    page[5:7] = size.to_bytes(2, "big")
    return bytes(page)


def test_an_overwritten_page_says_damaged_and_repair_indexes_again(tmp_path, template):
    lib = copy_library(template, tmp_path / "lib")
    overwrite_page(lib / "library.sqlite", "documents", empty_leaf_page())  # list used to say "empty"
    for command in (["list"], ["search", "kettle", "--json"]):
        line = one_line_error(docdesk(lib, *command, code=2))
        assert line.startswith("docdesk: the library database is damaged (SQLite's integrity check: ")
        assert f"restore {lib / 'library.sqlite'} from a backup, or run `docdesk repair`" in line

    repaired = docdesk(lib, "repair", "--json", code=0)
    report = json.loads(repaired.stdout)
    assert report["damage"].startswith("SQLite's integrity check")
    assert Path(report["set_aside"]).exists() and Path(report["set_aside"]).parent == lib
    assert {Path(a["path"]).name for a in report["added"]} == set(NOTES)
    listed = json.loads(docdesk(lib, "list", "--json", code=0).stdout)["documents"]
    assert {Path(d["path"]).name for d in listed} == set(NOTES)
    assert "nothing to repair" in docdesk(lib, "repair", code=0).stdout


def test_random_garbage_over_the_passages_says_damaged(tmp_path, template):
    lib = copy_library(template, tmp_path / "lib")
    garbage = random.Random(13).randbytes(4096)
    overwrite_page(lib / "library.sqlite", "passages", garbage)
    line = one_line_error(docdesk(lib, "search", "kettle", code=2))
    assert line.startswith("docdesk: the library database is damaged (")


def test_the_window_says_the_library_is_read_only(read_only_library, request):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    pytest.importorskip("pytestqt")
    qtbot = request.getfixturevalue("qtbot")
    from app.desk.services import DocDesk
    from app.desk.settings import Settings
    from app.gui.main_window import MainWindow

    window = MainWindow(DocDesk(Settings(library=read_only_library)), warm_up=False)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: "read-only" in window.library_label.text(), timeout=60_000)
    assert window.library_label.text() == "2 documents · 2 passages · read-only"
    assert "cannot be written" in window.library_label.toolTip()
    window.close()

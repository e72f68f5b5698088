"""Odd entries cost only themselves: a file name that is not UTF-8, a folder DocDesk may not
open, a named pipe, a link loop or a dangling link each get their own reason; the rest is added,
and `sync` of such a folder reports instead of raising."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ingest.discover import expand_paths
from ingest.pipeline import Ingestor
from ingest.store.library import Library
from tests.conftest import ROOT

NOBODY = 65534


def _cli(library: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, DOCDESK_HOME=str(library))
    return subprocess.run(
        [sys.executable, "-m", "app", *args, "--json"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_fifo_link_loop_and_dangling_link_say_what_they_are(tmp_path):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.txt"
    loop.symlink_to(loop)
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "gone.txt")
    found, failed = expand_paths([fifo, loop, dangling, tmp_path / "never.txt"])
    reasons = {Path(f["path"]).name: f["reason"] for f in failed}
    assert found == []
    assert "named pipe" in reasons["pipe.txt"]
    assert "loop of symbolic links" in reasons["loop.txt"]
    assert "does not exist" in reasons["dangling.txt"] and "gone.txt" in reasons["dangling.txt"]
    assert reasons["never.txt"] == "no such file or folder"


@pytest.mark.models
def test_a_name_that_is_not_utf8_is_reported_and_the_rest_added(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.txt").write_text("Tides rise and fall twice a day with the pull of the moon.", encoding="utf-8")
    bad = os.fsdecode(b"caf\xe9 menu.txt")  # Latin-1 bytes, as an old archive leaves them
    (docs / bad).write_text("Espresso and croissants are served until noon.", encoding="utf-8")
    for command in (["add", str(docs)], ["sync"]):
        proc = _cli(tmp_path / "lib", *command)
        assert proc.returncode == 1, proc.stderr  # some files failed; no traceback
        assert "Traceback" not in proc.stderr
        report = json.loads(proc.stdout)
        failed = {f["path"]: f["reason"] for f in report["failed"]}
        assert failed == {str(docs / "caf\\xe9 menu.txt"): failed[str(docs / "caf\\xe9 menu.txt")]}
        assert "not valid UTF-8" in next(iter(failed.values()))
    listed = json.loads(_cli(tmp_path / "lib", "list").stdout)
    assert [Path(d["path"]).name for d in listed["documents"]] == ["good.txt"]


def _as_nobody(work, *args):
    """Run `work(*args)` in a forked child that dropped to the unprivileged user first, and
    return what it returns. Forked, not spawned: the interpreter lives under /root, which that
    user may not enter. Nothing it needs is imported after the drop."""
    import ingest.readers  # noqa: F401 - imported while still allowed to
    import ingest.store.vectors  # noqa: F401

    context = multiprocessing.get_context("fork")
    results = context.Queue()

    def child() -> None:
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        try:
            results.put(work(*args))
        except BaseException as exc:  # the parent fails the test with it
            results.put(exc)

    process = context.Process(target=child)
    process.start()
    outcome = results.get(timeout=300)
    process.join(timeout=30)
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def _sync_or_add(library_dir: Path, embedder, folder: Path | None) -> dict:
    library = Library(library_dir)
    try:
        ingestor = Ingestor(library, embedder, read_in_subprocess=False)
        report = ingestor.add([folder]) if folder is not None else ingestor.sync()
        return {**report.as_dict(), "documents": len(library.documents())}
    finally:
        library.close()


@pytest.fixture
def shared_dir(tmp_path):
    """Where the unprivileged user may work: pytest's tmp_path sits under a folder only root opens."""
    if os.geteuid() != 0:
        pytest.skip("the test drops to the unprivileged user `nobody`, which needs root")
    folder = Path(tempfile.mkdtemp(prefix="docdesk-odd-"))
    folder.chmod(0o755)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)])


@pytest.mark.models
def test_an_unreadable_subfolder_is_reported_by_add_and_sync(shared_dir, embedder):
    docs, sub = shared_dir / "docs", shared_dir / "docs" / "private"
    sub.mkdir(parents=True)
    (docs / "tides.txt").write_text("Tides rise and fall twice a day with the pull of the moon.", encoding="utf-8")
    (sub / "cats.txt").write_text("Cats sleep peacefully beside warm fireplaces in winter.", encoding="utf-8")
    library = shared_dir / "lib"
    assert len(_sync_or_add(library, embedder, docs)["added"]) == 2  # as root, everything is readable
    # The second library knows tides.txt by itself (no folder): the forked child never embeds,
    # since torch's thread pool does not survive a fork.
    assert len(_sync_or_add(shared_dir / "lib2", embedder, docs / "tides.txt")["added"]) == 1
    for folder in (library, shared_dir / "lib2"):
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(folder)], check=True)
    sub.chmod(0o000)  # the user may no longer open it

    synced = _as_nobody(_sync_or_add, library, embedder, None)
    reasons = {f["path"]: f["reason"] for f in synced["failed"]}
    assert reasons[str(sub)].startswith("cannot open the folder: Permission denied")
    assert "its document is kept" in reasons[str(sub / "cats.txt")]
    assert synced["removed"] == [] and synced["documents"] == 2

    fresh = _as_nobody(_sync_or_add, shared_dir / "lib2", embedder, docs)  # add says so too, not silently
    assert [f["path"] for f in fresh["failed"]] == [str(sub)] and len(fresh["skipped"]) == 1

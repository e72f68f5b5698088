"""A library of 10,000 documents outside search: sync, list and the window's library pane.

    QT_QPA_PLATFORM=offscreen python tests/bench/bench_library_pane.py [--documents 10000]

1. Writes N small text files into one folder and stores each as an indexed document through
   Library.store_indexed (its real file, size, mtime and SHA-256; three passages with random
   vectors: embedding is not what is measured here), the folder remembered as `add` does.
2. `docdesk sync` of that unchanged folder and `docdesk list --json`, each a fresh process as a
   user runs them (median of 3).
3. In one process, with Qt offscreen: the library pane showing all N documents (what every
   refresh of the window costs the GUI thread), the filter typed one letter at a time, a progress
   update of one row, a sort by pages, and the process's peak memory with the pane filled.
4. `docdesk` itself (the window) on that library: its resident memory when shown and over the
   next 30 s while the models load behind it (Linux: read from /proc).

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def build(work: Path, count: int) -> Path:
    import numpy as np

    from ingest.records import Block, Chunks, Page, Passage, ReadResult
    from ingest.store.library import FileRecord, IndexedDocument, Library

    files, library_folder = work / "files", work / "library"
    files.mkdir()
    library = Library(library_folder)
    folder_id = library.remember_folder(str(files))
    rng = np.random.default_rng(0)
    for n in range(count):
        text = f"Document {n} talks about topic {n % 37} in some detail. " * 20
        path = files / f"note-{n:05d}.txt"
        path.write_text(text, encoding="utf-8")
        stat = path.stat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        chunks = Chunks(
            [Block(0, 0, len(text), 1, 1, 300, text)],
            [Passage(0, i, 0, len(text), 1, 1, text) for i in range(3)],
        )
        library.store_indexed(
            IndexedDocument(
                digest,
                FileRecord(str(path), digest, stat.st_size, stat.st_mtime, folder_id),
                ReadResult("text", [Page(1, text)], f"Note {n}"),
                chunks,
                rng.standard_normal((3, 384)).astype(np.float32),
                "en",
                "all-MiniLM-L6-v2",
            )
        )
    library.close()
    return library_folder


def cli_s(library: Path, *args: str) -> tuple[float, str]:
    env = dict(os.environ, DOCDESK_HOME=str(library))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "app", *args], env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - started, done.stdout


def window_rss_mb(library: Path, seconds: float = 30.0) -> dict:
    """`docdesk` (the window) on that library: its resident memory once shown, and the most it
    reaches in `seconds` while the models load behind it (the embedding model and the bundled LLM)."""
    with tempfile.TemporaryDirectory() as config:
        env = dict(os.environ, DOCDESK_HOME=str(library), DOCDESK_CONFIG=f"{config}/c.toml", DOCDESK_REPORT_STARTUP="1")
        proc = subprocess.Popen([sys.executable, "-m", "app"], env=env, stdout=subprocess.PIPE, text=True)
        try:
            proc.stdout.readline()  # the window is shown
            shown = _rss_mb(proc.pid)
            peak, deadline = shown, time.monotonic() + seconds
            while time.monotonic() < deadline and proc.poll() is None:
                peak = max(peak, _rss_mb(proc.pid))
                time.sleep(0.5)
            settled = _rss_mb(proc.pid)
        finally:
            proc.kill()
            proc.wait()
    return {"window_rss_shown_mb": shown, "window_rss_peak_mb": peak, "window_rss_after_s_mb": [seconds, settled]}


def _rss_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024)
    return 0


def pane(library_folder: Path) -> dict:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from ingest.store.library import Library

    app = QApplication.instance() or QApplication([])
    from app.gui.library_pane import LibraryPane

    library = Library(library_folder)
    started = time.perf_counter()
    docs = library.documents()
    documents_s = time.perf_counter() - started
    view = LibraryPane()
    view.resize(700, 900)
    view.show()
    app.processEvents()
    shows = []
    for _ in range(3):
        started = time.perf_counter()
        view.show_documents(docs)
        app.processEvents()
        shows.append(time.perf_counter() - started)
    keystrokes = []
    for text in ("n", "no", "not", "note", "note ", "note 9", "note 99", "note 999"):
        started = time.perf_counter()
        view.filter.setText(text)
        app.processEvents()
        keystrokes.append((time.perf_counter() - started) * 1000)
    rows_left = view.model.rowCount()
    view.filter.setText("")
    started = time.perf_counter()
    view.show_progress(docs[-1].path, "reading page 3")
    app.processEvents()
    progress_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    view.table.sortByColumn(2, Qt.DescendingOrder)
    app.processEvents()
    sort_ms = (time.perf_counter() - started) * 1000
    library.close()
    return {
        "library_documents_s": round(documents_s, 3),
        "pane_show_all_s": round(statistics.median(shows), 3),
        "filter_keystroke_ms": {"median": round(statistics.median(keystrokes), 1), "max": round(max(keystrokes), 1)},
        "filter_rows_left": rows_left,
        "progress_update_ms": round(progress_ms, 1),
        "sort_by_pages_ms": round(sort_ms, 1),
        "pane_process_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="docdesk-pane-") as folder:
        work = Path(folder)
        started = time.perf_counter()
        library = build(work, args.documents)
        build_s = time.perf_counter() - started
        syncs, lists = [], []
        for _ in range(3):
            took, out = cli_s(library, "sync", "--json")
            syncs.append(took)
            lists.append(cli_s(library, "list", "--json")[0])
        report = json.loads(out)
        result = {
            "documents": args.documents,
            "build_s": round(build_s, 1),
            "sync_unchanged_s": round(statistics.median(syncs), 2),
            "sync_added": len(report.get("added", [])),
            "sync_removed": len(report.get("removed", [])),
            "list_json_s": round(statistics.median(lists), 2),
            **pane(library),
            **window_rss_mb(library),
        }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

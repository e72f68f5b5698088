"""Progress of `add` and `sync` as plain lines on stderr, for a log, a pipe or cron (where the
one-line bar of app/cli/progress.py, redrawn with carriage returns, would be noise): a line for
each file indexed or failed, and one every few seconds while a long file or step goes on."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ingest.pipeline import Progress

EVERY_S = 5.0  # at most one line this often while nothing finishes


class Tally:
    """Pages and passages of the files indexed so far, and the counts both progress forms print."""

    def __init__(self) -> None:
        self.pages = 0
        self.passages = 0

    def count(self, event: Progress) -> None:
        if event.stage == "done":
            self.pages += event.pages
            self.passages += event.passages

    def counts(self, event: Progress) -> str:
        return f"{event.files_done}/{event.files_total} files · {self.pages} pages · {self.passages} passages"


class ProgressLines:
    def __init__(self, stream=None, every_s: float = EVERY_S, clock=time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.every_s = every_s
        self.clock = clock
        self.tally = Tally()
        self._last_line = clock()

    def __call__(self, event: Progress) -> None:
        self.tally.count(event)
        finished = event.stage in ("done", "failed") or (
            event.stage == "reembedding" and event.files_done == event.files_total
        )
        if not finished and self.clock() - self._last_line < self.every_s:
            return
        self._write(self._line(event))

    def _line(self, event: Progress) -> str:
        counts = self.tally.counts(event)
        if event.stage == "hashing":
            return f"checking {event.files_done + 1}/{event.files_total} files: {event.path}"
        if event.stage == "reembedding":
            return f"re-embedding for a new model: {event.files_done}/{event.files_total} documents"
        if event.stage == "done":
            return f"{counts} · indexed {event.path} ({event.pages} pages, {event.passages} passages)"
        if event.stage == "failed":
            return f"{counts} · failed {event.path}: {event.reason}"
        stage = "OCR" if event.stage == "reading" and event.ocr_page else event.stage
        return f"{counts} · {stage} {event.path}{detail(event)}"

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()
        self._last_line = self.clock()

    def finish(self) -> None:
        pass


def detail(event: Progress) -> str:
    """Where the file being read or embedded is, with its totals where they are known:
    ": page 2/4, 14 passages so far", ": page 3/10" (OCR), ": 96/120 passages" (embedding)."""
    passages = f", {event.passages} passages so far" if event.passages else ""
    if event.stage == "reading" and event.ocr_page:
        of = f"/{event.pages_total}" if event.pages_total else ""
        return f": page {event.ocr_page}{of}{passages}"
    if event.stage == "reading" and event.pages_total:
        return f": page {event.pages}/{event.pages_total}{passages}"
    if event.stage == "embedding" and event.passages_total:
        return f": {event.passages}/{event.passages_total} passages"
    return f": {event.pages} pages, {event.passages} passages so far" if event.pages else ""


def fraction(event: Progress) -> float:
    """How much of the file being read or embedded is done (0 where its total is not known)."""
    if event.stage == "reading" and event.pages_total:
        return min(1.0, (event.ocr_page - 1 if event.ocr_page else event.pages) / event.pages_total)
    if event.stage == "embedding" and event.passages_total:
        return min(1.0, event.passages / event.passages_total)
    return 0.0

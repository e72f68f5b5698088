"""A one-line progress bar on stderr for long CLI work (files, pages, passages)."""

from __future__ import annotations

import sys
import time

from app.cli.progress_lines import ProgressLines, Tally, detail, fraction
from ingest.pipeline import Progress


class ProgressBar:
    def __init__(self, stream=None, width: int = 24) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.width = width
        self.tally = Tally()
        self.started = time.monotonic()
        self._last_draw = 0.0

    def __call__(self, event: Progress) -> None:
        self.tally.count(event)
        if event.stage in ("hashing",) and not self.tty:
            return
        total = max(event.files_total, 1)
        name = event.path.rsplit("/", 1)[-1][:40]
        counts = self.tally.counts(event)
        if event.stage == "reembedding":
            counts = f"re-embedding for a new model: {event.files_done}/{event.files_total} documents"
        if self.tty:
            now = time.monotonic()
            final = event.files_done == event.files_total and event.stage in ("done", "failed")
            if not final and now - self._last_draw < 0.1:
                return
            self._last_draw = now
            within = fraction(event) if event.stage in ("reading", "embedding") else 0.0  # of the file being read
            filled = min(self.width, int(self.width * (event.files_done + within) / total))
            bar = "█" * filled + "·" * (self.width - filled)
            stage = "OCR" if event.stage == "reading" and event.ocr_page else event.stage
            self.stream.write(f"\r\x1b[K{bar} {counts} {stage} {name}{detail(event)}")
            self.stream.flush()
        elif event.stage in ("done", "failed", "reembedding"):
            suffix = f": {event.reason}" if event.reason else ""
            self.stream.write(f"{counts} {event.stage} {name}{suffix}\n")

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


class SummaryProgressLine:
    """Summary progress on stderr: stage, steps done / total, elapsed and time left."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._open = False

    def __call__(self, event) -> None:
        left = f", about {event.eta_s:.0f} s left" if event.eta_s is not None and event.done < event.total else ""
        cached = f" ({event.cached} from cache)" if event.cached else ""
        line = f"{event.stage}: {event.done}/{event.total}{cached} · {event.elapsed_s:.0f} s{left}"
        if self.tty:
            self.stream.write(f"\r\x1b[K{line}")
            self._open = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty and self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False


def progress_for(stream=None):
    """The bar on a terminal, plain lines anywhere else."""
    stream = stream or sys.stderr
    return ProgressBar(stream) if stream.isatty() else ProgressLines(stream)

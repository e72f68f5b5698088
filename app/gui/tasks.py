"""Background work for the window: the GUI thread only paints.

Single-thread executors (docs/ARCHITECTURE.md §2): one for ingest (the embedder is one model), one
for every LLM call (the engine: asks, summaries, tests, model loading), one for answers when the
model has parallel slots (they need not wait behind a summary), and one for the window's quick
library reads. Results, errors and progress come back to the GUI thread through
a queued Qt signal; streamed text is buffered and drained by a ~30 Hz timer, so a fast model
cannot flood the event loop.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

log = logging.getLogger(__name__)


class _Bridge(QObject):
    """Carries a callback and its argument from any thread to the GUI thread.

    The pair goes through a plain queue; the signal that wakes the GUI thread carries nothing.
    Passing Python objects (None above all) through cross-thread signal arguments is where
    PySide6 has lost references: the benchmark's busy loop died with "deallocating None".
    """

    wake = Signal()

    def __init__(self) -> None:
        super().__init__()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self.wake.connect(self._drain, Qt.QueuedConnection)

    def post(self, callback, value) -> None:  # any thread
        self._queue.put((callback, value))
        self.wake.emit()

    @Slot()
    def _drain(self) -> None:
        while True:
            try:
                callback, value = self._queue.get_nowait()
            except queue.Empty:
                return
            try:
                callback(value)
            except Exception:  # a bug in a handler must not take the window down
                log.exception("GUI callback failed")


class TextBuffer:
    """Streamed text from a worker, drained by the GUI at most ~30 times a second. Each piece has
    a kind ("answer" by default; "reasoning" for a thinking model's; "restart" to drop what was
    shown): the GUI gets them in order, runs of one kind joined, as on_text(text) for answer
    pieces and on_piece(kind, text) for the others."""

    def __init__(self, on_text: Callable[[str], None], interval_ms: int = 33, on_piece=None) -> None:
        self._parts: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._on_text = on_text
        self._on_piece = on_piece
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.drain)
        self._timer.start()

    def append(self, text: str, kind: str = "answer") -> None:  # any thread
        with self._lock:
            self._parts.append((kind, text))

    def drain(self) -> None:  # GUI thread
        with self._lock:
            parts, self._parts = self._parts, []
        runs: list[tuple[str, str]] = []
        for kind, text in parts:
            if runs and runs[-1][0] == kind and kind != "restart":
                runs[-1] = (kind, runs[-1][1] + text)
            else:
                runs.append((kind, text))
        for kind, text in runs:
            if kind == "answer":
                if text:
                    self._on_text(text)
            elif self._on_piece is not None:
                self._on_piece(kind, text)

    def stop(self) -> None:
        self._timer.stop()
        self.drain()


class Workers:
    """The worker threads and the ops running on them (app/gui/ops.py is how work is started)."""

    def __init__(self) -> None:
        self._bridge = _Bridge()
        self._pools = {
            "ingest": ThreadPoolExecutor(1, thread_name_prefix="docdesk-ingest"),
            "engine": ThreadPoolExecutor(1, thread_name_prefix="docdesk-engine"),
            # Answers when the loaded model has parallel slots (a server): a question runs beside
            # a summary instead of behind it; the backend's own slots bound them.
            "answer": ThreadPoolExecutor(1, thread_name_prefix="docdesk-answer"),
            # Quick reads and writes of the library for the window (lists, pages, chats), so the
            # GUI thread never waits on SQLite or the disk, and never behind a long ingest.
            "store": ThreadPoolExecutor(1, thread_name_prefix="docdesk-store"),
        }
        self.ops: list = []
        self._closed = False

    def to_gui(self, callback: Callable, value=None) -> None:
        """Run callback(value) on the GUI thread (callable from any thread)."""
        self._bridge.post(callback, value)

    def start(self, op, execute: Callable[[], None]) -> Future:
        if self._closed:  # a refresh queued on the GUI thread as the window closed: nothing runs it
            future: Future = Future()
            future.cancel()
            return future
        future = self._pools[op.pool].submit(execute)
        self.ops = [o for o in self.ops if o.running] + [op]
        return future

    def busy(self) -> bool:
        return any(o.running for o in self.ops)

    def shutdown(self, timeout_s: float = 30.0) -> None:
        """Cancel every op and wait for the workers: the library is left between transactions.
        Ops started after this are cancelled at once."""
        self._closed = True
        for op in self.ops:
            op.cancel()
        deadline = time.monotonic() + timeout_s
        for op in self.ops:
            if op.future is not None:
                try:
                    op.future.result(max(0.0, deadline - time.monotonic()))
                except Exception:
                    pass
        for pool in self._pools.values():
            pool.shutdown(wait=False, cancel_futures=True)

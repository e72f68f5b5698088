"""Background work for the window: the GUI thread only paints.

Two single-thread executors, as in DESIGN.md §5: one for ingest (the embedder is one model),
one for every LLM call (the engine: asks, summaries, tests, model loading). Results, errors
and progress come back to the GUI thread through a queued Qt signal; streamed text is
buffered and drained by a ~30 Hz timer, so a fast model cannot flood the event loop.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import traceback
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


class Job:
    def __init__(self, name: str) -> None:
        self.name = name
        self.cancel = threading.Event()
        self.future: Future | None = None

    @property
    def running(self) -> bool:
        return self.future is not None and not self.future.done()


class TextBuffer:
    """Streamed text from a worker, drained by the GUI at most ~30 times a second."""

    def __init__(self, on_text: Callable[[str], None], interval_ms: int = 33) -> None:
        self._parts: list[str] = []
        self._lock = threading.Lock()
        self._on_text = on_text
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.drain)
        self._timer.start()

    def append(self, text: str) -> None:  # any thread
        with self._lock:
            self._parts.append(text)

    def drain(self) -> None:  # GUI thread
        with self._lock:
            text, self._parts = "".join(self._parts), []
        if text:
            self._on_text(text)

    def stop(self) -> None:
        self._timer.stop()
        self.drain()


class Workers:
    def __init__(self) -> None:
        self._bridge = _Bridge()
        self._pools = {
            "ingest": ThreadPoolExecutor(1, thread_name_prefix="docdesk-ingest"),
            "engine": ThreadPoolExecutor(1, thread_name_prefix="docdesk-engine"),
        }
        self.jobs: list[Job] = []

    def to_gui(self, callback: Callable, value=None) -> None:
        """Run callback(value) on the GUI thread (callable from any thread)."""
        self._bridge.post(callback, value)

    def throttled(self, callback: Callable, every_s: float = 0.05, final=lambda _v: False) -> Callable:
        """A progress callback for workers that reaches the GUI at most every `every_s` (finals always)."""
        last = [0.0]

        def report(value) -> None:
            now = time.monotonic()
            if final(value) or now - last[0] >= every_s:
                last[0] = now
                self.to_gui(callback, value)

        return report

    def submit(
        self,
        pool: str,
        name: str,
        work: Callable[[Job], object],
        done: Callable[[object], None] | None = None,
        failed: Callable[[str], None] | None = None,
    ) -> Job:
        job = Job(name)

        def run():
            try:
                result = work(job)
            except BaseException as exc:  # reported, never raised into the pool
                if not isinstance(exc, Exception):
                    raise
                log.info("%s failed: %s", name, "".join(traceback.format_exception_only(exc)).strip())
                if failed:
                    self.to_gui(failed, str(exc) or type(exc).__name__)
                return None
            if done:
                self.to_gui(done, result)
            return result

        job.future = self._pools[pool].submit(run)
        self.jobs = [j for j in self.jobs if j.running] + [job]
        return job

    def busy(self) -> bool:
        return any(j.running for j in self.jobs)

    def shutdown(self, timeout_s: float = 30.0) -> None:
        """Cancel every job and wait for the workers: the library is left between transactions."""
        for job in self.jobs:
            job.cancel.set()
        deadline = time.monotonic() + timeout_s
        for job in self.jobs:
            if job.future is not None:
                try:
                    job.future.result(max(0.0, deadline - time.monotonic()))
                except Exception:
                    pass
        for pool in self._pools.values():
            pool.shutdown(wait=False, cancel_futures=True)

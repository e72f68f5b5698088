"""One way to run work off the GUI thread, in the spirit of Anki's QueryOp.

    Op(workers, "engine", "summarize", work)
        .progress(panel.show_progress, every_s=0.1)
        .success(panel.show_summary)
        .cancelled(panel.show_cancelled)
        .failure(panel.show_failure)
        .busy(set_busy)
        .run()

`work(ctx)` runs on a worker thread; `ctx.cancel` is its stop flag and `ctx.progress(value)`
reports progress (throttled on the way to the GUI). Exactly one outcome comes back on the GUI
thread: success with the result, cancellation (the work raised `Cancelled`, or was cancelled
and raised anyway) or failure with the exception itself, never its text. The op owns its busy
state: `busy(True)` when it starts, `busy(False)` after the outcome was handled.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from engine.errors import Cancelled

log = logging.getLogger(__name__)


class OpContext:
    """What the work sees: the stop flag and a progress reporter (both thread-safe)."""

    def __init__(self, cancel: threading.Event, report: Callable[[Any], None]) -> None:
        self.cancel = cancel
        self._report = report

    def progress(self, value) -> None:
        self._report(value)

    @property
    def cancelled(self) -> bool:
        return self.cancel.is_set()


class Op:
    def __init__(self, workers, pool: str, name: str, work: Callable[[OpContext], Any]) -> None:
        self.workers, self.pool, self.name, self.work = workers, pool, name, work
        self.cancel_event = threading.Event()
        self._on_success: Callable[[Any], None] = lambda _result: None
        self._on_failure: Callable[[BaseException], None] = self._log_failure
        self._on_cancelled: Callable[[Cancelled], None] = lambda _stopped: None
        self._on_progress: Callable[[Any], None] | None = None
        self._progress_every_s = 0.05
        self._progress_final: Callable[[Any], bool] = lambda _value: False
        self._on_busy: Callable[[bool], None] = lambda _busy: None
        self._on_started: Callable[[None], None] = lambda _none: None
        self.future = None
        self.outcome = ""  # "" while running | success | cancelled | failure

    # -- configuration (chained) ------------------------------------------------------------
    def success(self, handler: Callable[[Any], None]) -> Op:
        self._on_success = handler
        return self

    def failure(self, handler: Callable[[BaseException], None]) -> Op:
        self._on_failure = handler
        return self

    def cancelled(self, handler: Callable[[Cancelled], None]) -> Op:
        self._on_cancelled = handler
        return self

    def progress(self, handler: Callable[[Any], None], every_s: float = 0.05, final=lambda _v: False) -> Op:
        """Progress reaches the GUI at most every `every_s`; values where `final` is true always do."""
        self._on_progress, self._progress_every_s, self._progress_final = handler, every_s, final
        return self

    def busy(self, handler: Callable[[bool], None]) -> Op:
        self._on_busy = handler
        return self

    def started(self, handler: Callable[[None], None]) -> Op:
        """`handler(None)` on the GUI thread when a worker takes the op up: until then it waits
        behind the work before it in its pool (a question behind a summary)."""
        self._on_started = handler
        return self

    # -- running ------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.future is not None and not self.future.done()

    def cancel(self) -> None:
        """Stop it: running work sees `ctx.cancel`; work still waiting for its worker never
        starts, and its cancelled outcome comes back at once."""
        self.cancel_event.set()
        if self.future is not None and self.future.cancel():
            self._finish("cancelled", self._on_cancelled, Cancelled("stopped before it started"))

    def run(self) -> Op:
        """Start it (from the GUI thread)."""
        self._on_busy(True)
        context = OpContext(self.cancel_event, self._throttled_progress())
        self.future = self.workers.start(self, lambda: self._execute(context))
        if self.future.cancelled():  # the window closed its workers: this op never runs
            self._finish("cancelled", self._on_cancelled, Cancelled("the window is closing"))
        return self

    def _throttled_progress(self) -> Callable[[Any], None]:
        if self._on_progress is None:
            return lambda _value: None
        handler, last = self._on_progress, [0.0]

        def report(value) -> None:
            now = time.monotonic()
            if self._progress_final(value) or now - last[0] >= self._progress_every_s:
                last[0] = now
                self.workers.to_gui(handler, value)

        return report

    def _execute(self, context: OpContext) -> None:  # on the worker thread
        self.workers.to_gui(self._on_started, None)
        try:
            result = self.work(context)
        except Cancelled as stopped:
            self._finish("cancelled", self._on_cancelled, stopped)
        except Exception as exc:  # reported to the GUI, never raised into the pool
            log.info("%s failed: %s", self.name, "".join(traceback.format_exception_only(exc)).strip())
            self._finish("failure", self._on_failure, exc)
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: still end the busy state
            self._finish("failure", self._on_failure, exc)
            raise
        else:
            self._finish("success", self._on_success, result)

    def _finish(self, outcome: str, handler: Callable, value) -> None:
        def deliver(_unused) -> None:  # on the GUI thread
            self.outcome = outcome
            try:
                handler(value)
            finally:
                self._on_busy(False)

        self.workers.to_gui(deliver, None)

    def _log_failure(self, exc: BaseException) -> None:
        log.warning("%s failed: %s", self.name, exc)


def describe(exc: BaseException) -> str:
    """An exception as one line for the user: its message, or its type where it has none."""
    return str(exc) or type(exc).__name__

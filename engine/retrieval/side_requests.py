"""Side requests: what the model is asked beside the answer (a follow-up's rewrite, a question's
translations, the judgement of passages). None of them may cost the answer: each runs with a
deadline, and one that fails, overruns or returns something malformed is skipped with a note
(logged, and kept on the question's Retrieval for --verbose and the passages view); the answer
goes on without it. Stop (the question's cancel) still stops everything at once.

The work runs on a thread of its own, so a server that stalls mid-reply cannot hold the answer
past the deadline: the side request's own cancel is set, and its thread ends when the reply does.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from engine.errors import Cancelled

log = logging.getLogger(__name__)
T = TypeVar("T")

# seconds on a GPU; a CPU gets CPU_FACTOR times as long (a side request there is a few tokens too)
DEADLINES = {"rewrite": 5.0, "translate": 5.0, "rerank": 3.0}
CPU_FACTOR = 4.0


class SideCancel(threading.Event):
    """The side request's cancel: set by itself (the deadline passed), or when the question's is."""

    def __init__(self, parent: threading.Event) -> None:
        super().__init__()
        self.parent = parent

    def is_set(self) -> bool:
        return super().is_set() or self.parent.is_set()


def deadline_for(name: str, on_gpu: bool) -> float:
    return DEADLINES[name] * (1.0 if on_gpu else CPU_FACTOR)


def run_side(
    name: str,
    work: Callable[[threading.Event], T],
    fallback: T,
    cancel: threading.Event,
    seconds: float,
    notes: list[str],
) -> T:
    """work(its own cancel), or `fallback` with a note in `notes` where it failed or took longer
    than `seconds`. Raises Cancelled where the question itself was stopped."""
    side = SideCancel(cancel)
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = work(side)
        except BaseException as exc:  # noqa: BLE001  (reported below, on the question's thread)
            outcome["error"] = exc

    thread = threading.Thread(target=run, name=f"docdesk-{name}", daemon=True)
    started = time.perf_counter()
    thread.start()
    thread.join(seconds)
    if cancel.is_set():
        side.set()
        raise Cancelled("stopped")
    if thread.is_alive():
        side.set()  # the work stops at its next chance; its thread ends with the server's reply
        note = f"{name} skipped: no reply within {seconds:g} s"
    elif "error" in outcome:
        error = outcome["error"]
        if isinstance(error, Cancelled) and not cancel.is_set():
            note = f"{name} skipped: stopped at its deadline ({seconds:g} s)"
        elif isinstance(error, Exception):
            note = f"{name} skipped: {error.__class__.__name__}: {str(error)[:200]}"
        else:  # KeyboardInterrupt, SystemExit: not ours to swallow
            raise error
    else:
        return outcome["value"]
    log.warning("%s (after %.1f s); the answer goes on without it", note, time.perf_counter() - started)
    notes.append(note)
    return fallback

"""The window's one way to run background work: each outcome on the GUI thread, the exception
itself on failure, cancellation as its own outcome, throttled progress, and the busy state."""

from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from app.gui.ops import Op  # noqa: E402
from app.gui.tasks import Workers  # noqa: E402
from engine.errors import Cancelled  # noqa: E402


@pytest.fixture
def workers(qapp):
    workers = Workers()
    yield workers
    workers.shutdown()


def _run(qtbot, op: Op) -> list:
    """Run an op and collect what reaches the GUI thread, in order, with the thread it ran on."""
    seen: list = []
    gui = threading.current_thread()

    def note(kind):
        return lambda value: seen.append((kind, value, threading.current_thread() is gui))

    op.success(note("success")).failure(note("failure")).cancelled(note("cancelled")).busy(note("busy"))
    op.run()
    qtbot.waitUntil(lambda: ("busy", False, True) in seen, timeout=5_000)
    return seen


def test_success_comes_back_on_the_gui_thread_with_busy_around_it(qtbot, workers):
    seen = _run(qtbot, Op(workers, "store", "add", lambda ctx: 2 + 2))
    assert seen == [("busy", True, True), ("success", 4, True), ("busy", False, True)]


def test_a_failure_brings_the_exception_itself(qtbot, workers):
    def work(_ctx):
        raise FileNotFoundError(2, "No such file", "/gone.pdf")

    seen = _run(qtbot, Op(workers, "store", "read", work))
    kind, exc, on_gui = seen[1]
    assert kind == "failure" and isinstance(exc, FileNotFoundError) and exc.filename == "/gone.pdf" and on_gui


def test_cancellation_is_its_own_outcome(qtbot, workers):
    started = threading.Event()

    def work(ctx):
        started.set()
        ctx.cancel.wait(5)
        raise Cancelled("stopped: 3 steps are kept")

    op = Op(workers, "engine", "summarize", work)
    seen: list = []
    op.cancelled(seen.append).success(lambda r: seen.append(("success", r))).busy(lambda b: seen.append(b))
    op.run()
    assert started.wait(5)
    op.cancel()
    qtbot.waitUntil(lambda: False in seen, timeout=5_000)
    assert seen[0] is True and isinstance(seen[1], Cancelled) and seen[2] is False and op.outcome == "cancelled"


def test_progress_is_throttled_and_the_final_value_always_arrives(qtbot, workers):
    values: list[int] = []

    def work(ctx):
        for i in range(1000):
            ctx.progress(i)
        return "done"

    op = Op(workers, "ingest", "add", work).progress(values.append, every_s=10.0, final=lambda v: v == 999)
    done: list = []
    op.success(done.append).run()
    qtbot.waitUntil(lambda: done == ["done"], timeout=5_000)
    assert values == [0, 999]  # the first report, then only the one marked final


def test_shutdown_cancels_what_runs_and_waits_for_it(qtbot, qapp):
    workers = Workers()
    stopped = threading.Event()

    def work(ctx):
        ctx.cancel.wait(10)
        stopped.set()

    op = Op(workers, "engine", "ask", work).run()
    assert workers.busy()
    workers.shutdown(timeout_s=5)
    assert stopped.is_set() and not op.running and not workers.busy()


def test_an_op_waiting_for_its_worker_is_cancelled_at_once_and_never_runs(qtbot, workers):
    release = threading.Event()
    ran: list[str] = []
    first = Op(workers, "engine", "summary", lambda ctx: release.wait(10)).run()
    seen: list = []
    second = Op(workers, "engine", "ask", lambda ctx: ran.append("ask"))
    second.started(lambda _none: seen.append("started")).cancelled(lambda stopped: seen.append(("cancelled", stopped)))
    second.busy(lambda busy: seen.append(("busy", busy))).run()
    second.cancel()  # it waits behind `first`: its outcome comes back without waiting for `first`
    qtbot.waitUntil(lambda: ("busy", False) in seen, timeout=2_000)
    assert first.running and not ran
    assert seen[0] == ("busy", True) and isinstance(seen[1][1], Cancelled) and "started" not in seen
    release.set()
    qtbot.waitUntil(lambda: not first.running, timeout=5_000)
    assert not ran


def test_started_comes_when_a_worker_takes_the_op_up(qtbot, workers):
    release = threading.Event()
    first = Op(workers, "engine", "summary", lambda ctx: release.wait(10)).run()
    seen: list = []
    Op(workers, "engine", "ask", lambda ctx: seen.append("work")).started(lambda _none: seen.append("started")).run()
    qtbot.wait(200)
    assert seen == []  # still behind `first`
    release.set()
    qtbot.waitUntil(lambda: seen == ["started", "work"] or len(seen) == 2, timeout=5_000)
    assert set(seen) == {"started", "work"} and not first.running

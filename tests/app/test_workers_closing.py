"""An op started after the window shut its workers down (a library refresh queued on the GUI
thread as the window closed) is cancelled at once instead of raising from a closed pool."""

from __future__ import annotations

from app.gui.ops import Op
from app.gui.tasks import Workers


def test_an_op_started_after_shutdown_is_cancelled_not_raised(qtbot):
    workers = Workers()
    ran, outcomes = [], []
    workers.shutdown(timeout_s=1.0)

    op = Op(workers, "store", "refresh", lambda ctx: ran.append(True))
    op.cancelled(lambda stopped: outcomes.append(str(stopped))).busy(lambda busy: outcomes.append(busy))
    op.run()

    qtbot.waitUntil(lambda: op.outcome == "cancelled", timeout=5000)
    assert ran == []
    assert outcomes == [True, "the window is closing", False]  # busy on, the reason, busy off
    assert not op.running and not workers.busy()


def test_ops_run_until_shutdown(qtbot):
    workers = Workers()
    results = []
    op = Op(workers, "store", "read", lambda ctx: 42).success(results.append)
    op.run()
    qtbot.waitUntil(lambda: results == [42], timeout=5000)
    assert op.outcome == "success"
    workers.shutdown(timeout_s=1.0)

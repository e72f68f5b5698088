"""A native crash in the model while it answers (what llama-cpp-python's segfault did): the
question is already in the chat, the fault handler's output becomes a crash report in the log
folder, and the next start says what happened, what was kept and what to change."""

from __future__ import annotations

import faulthandler
import os
import subprocess
import sys
import textwrap

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # the window test, also when this file runs alone

import pytest  # noqa: E402

from app.desk.crash import CrashGuard, report_previous  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

pytestmark = pytest.mark.models

QUESTION = "Where do cats sleep in winter?"

# A real SIGSEGV inside generation: the backend's reply function dereferences NULL.
CRASHING_ANSWER = textwrap.dedent(
    """
    import ctypes, sys
    from pathlib import Path
    from app.desk.crash import CrashGuard
    from app.desk.services import DocDesk
    from app.desk.settings import Settings
    from engine.backends.fake import FakeBackend

    library, logs, question = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    guard = CrashGuard()
    guard.start(logs)
    desk = DocDesk(Settings(library=library), guard, backend=FakeBackend(lambda request: ctypes.string_at(0)))
    for _event in desk.answer(question):  # as every front door answers: the façade marks it
        pass
    print("not reached")
    """
)


@pytest.fixture
def crashed(tmp_path, embedder):
    """A library with one document, and a process that died answering a question about it."""
    from app.desk.services import DocDesk
    from app.desk.settings import Settings

    library, logs = tmp_path / "library", tmp_path / "logs"
    (tmp_path / "cats.txt").write_text("Cats sleep peacefully beside warm fireplaces in winter.", encoding="utf-8")
    desk = DocDesk(Settings(library=library))
    desk.add([tmp_path / "cats.txt"])
    desk.close()
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-c", CRASHING_ANSWER, str(library), str(logs), QUESTION],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -11, (proc.returncode, proc.stderr[-2000:])  # SIGSEGV, as a native crash ends
    assert "not reached" not in proc.stdout
    return library, logs


def test_the_next_start_reports_the_crash_and_the_saved_question(crashed):
    from app.desk.services import DocDesk
    from app.desk.settings import Settings

    library, logs = crashed
    assert list(logs.glob("session-*.json")), "the dead session left its marker"
    notice = report_previous(logs)
    assert notice is not None
    assert "stopped unexpectedly" in notice.text and "while answering a question" in notice.text
    assert "Segmentation fault" in notice.text
    assert f'Your question "{QUESTION}" was saved in the chat "{QUESTION}"' in notice.text
    assert "docdesk doctor" in notice.text and "GPU=cpu" in notice.text
    report = notice.report.read_text(encoding="utf-8")
    assert "Fatal Python error: Segmentation fault" in report
    assert "stream_chat" in report or "fake.py" in report  # the fault handler's traceback of the crash
    assert list(logs.glob("session-*.json")) == [] and list(logs.glob("faults-*.log")) == []  # reported, gone

    desk = DocDesk(Settings(library=library))  # the question itself is in the chat, unanswered
    try:
        (chat,) = desk.chats.list()
        messages = desk.chats.messages(chat.id)
        assert [(m.role, m.content) for m in messages] == [("user", QUESTION)]
    finally:
        desk.close()
    assert report_previous(logs) is None  # reported once


def test_a_clean_exit_leaves_nothing_to_report(tmp_path):
    guard = CrashGuard()
    try:
        guard.start(tmp_path)
        with guard.doing("answering", question="Anything?"):
            assert "Anything?" in (tmp_path / f"session-{os.getpid()}.json").read_text(encoding="utf-8")
        guard.stop()
    finally:
        faulthandler.enable()  # pytest's own fault handler, which the guard replaced
    assert list(tmp_path.iterdir()) == []
    assert report_previous(tmp_path) is None


def test_the_window_shows_the_notice(crashed, qtbot):
    pytest.importorskip("pytestqt")
    from app.desk.services import DocDesk
    from app.desk.settings import Settings
    from app.gui.main_window import MainWindow

    library, logs = crashed
    notice = report_previous(logs)
    window = MainWindow(DocDesk(Settings(library=library)), warm_up=False, crash_notice=notice)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.crash_box.isVisible(), timeout=5000)
    assert window.crash_label.isVisible()
    assert QUESTION in window.crash_box.text()
    window.crash_box.close()
    window.close()


def test_overlapping_blocks_on_two_threads_leave_the_marker_idle(tmp_path):
    """The window and the editors' server answer at once: when both are done, nothing is marked."""
    import json
    import os

    from app.desk.crash import CrashGuard

    guard = CrashGuard()
    guard.start(tmp_path)
    marker = tmp_path / f"session-{os.getpid()}.json"
    first = guard.doing("answering", question="first")
    second = guard.doing("answering", question="second")
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first ends before the second
    assert json.loads(marker.read_text())["question"] == "second"
    second.__exit__(None, None, None)
    assert json.loads(marker.read_text())["activity"] == "idle"
    guard.stop()

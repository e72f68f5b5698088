"""The real window on an X server (Xvfb) at 1366×768 and 1920×1080: on a first start and restored
from a larger screen, the window, Send, New chat, the menu bar and the status bar are on the screen
and drawn there, and every dialog lies inside it. Skipped where xvfb-run is not installed
(apt-get install xvfb xauth and Qt's xcb libraries: see the Makefile's screenshots target)."""

from __future__ import annotations

import os
import shutil

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from PySide6.QtGui import QImage  # noqa: E402

from tests.app.test_window_fit import check_report, probe  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run is not installed")


def drawn(image: QImage, rect: list[int]) -> bool:
    """Something is painted at the centre of `rect` (Xvfb's bare root window is black)."""
    x, y, w, h = rect
    return image.pixelColor(x + w // 2, y + h // 2).lightness() > 40


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (1920, 1080)])
def test_the_window_is_wholly_on_a_real_screen(tmp_path, width, height):
    report = probe(tmp_path, width, height, xvfb=True)
    check_report(report, width, height, 1)
    shot = QImage(str(tmp_path / "screen.png"))
    assert (shot.width(), shot.height()) == (width, height)
    first = report["first"]
    for name in ("send", "new_chat", "status_bar", "menu_bar"):
        assert drawn(shot, first[name]), (name, first[name])


# The window's behaviours the issue names, run again in real windows on an X server of each size:
# an unclosed code fence followed by another turn (both with linked citations), a question during a
# summary, Tab out of the table and the question box, a CLI add seen by the window, the viewer's marks.
ON_A_REAL_SCREEN = [
    "tests/app/test_transcript.py",
    "tests/app/test_waiting_work.py",
    "tests/app/test_keyboard.py::test_tab_leaves_the_library_table_and_the_question_box",
    "tests/app/test_library_follows.py::test_a_cli_add_shows_in_the_open_window",
    "tests/app/test_viewer_marks.py::test_the_viewer_shows_the_marked_pages_fitted_to_its_width",
]


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (1920, 1080)])
def test_the_window_behaves_in_real_windows(tmp_path, width, height):
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = dict(os.environ, QT_QPA_PLATFORM="xcb")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *ON_A_REAL_SCREEN]
    command = ["xvfb-run", "-a", "-s", f"-screen 0 {width}x{height}x24", *command, "--basetemp", str(tmp_path / "t")]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if "Could not load the Qt platform plugin" in run.stdout + run.stderr:
        pytest.skip("Qt's xcb plugin cannot load: its libraries (libxcb-icccm4, libxcb-keysyms1, …) are missing")
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "skipped" not in summary and " passed" in summary, summary

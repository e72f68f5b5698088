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

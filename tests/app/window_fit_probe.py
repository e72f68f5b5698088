"""The window on whatever screen Qt gives it (offscreen with a screen file, or a real X server):
shown on a first start and again restored, with every dialog opened; prints where each lies
as JSON. tests/app/test_window_fit.py and test_window_xvfb.py run it in a child process.

    python tests/app/window_fit_probe.py [screenshot.png]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def _settle(app, seconds: float = 0.3) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.02)


def _rect(r) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def _on_screen(widget) -> list[int]:
    """A child widget's rectangle in screen coordinates."""
    top_left = widget.mapToGlobal(widget.rect().topLeft())
    return [top_left.x(), top_left.y(), widget.width(), widget.height()]


def _dialogs(window) -> dict[str, list[int]]:
    from PySide6.QtWidgets import QApplication, QDialog

    window.viewer.show()
    window.summary_panel.show()
    window.open_settings()
    window.engine.show_doctor_report()
    window.show_about()
    window.chat_pane.messages = [{"role": "assistant", "text": "An answer.", "sources": []}]
    window.chat.show_passages(0)
    _settle(QApplication.instance())
    shown = [w for w in window.findChildren(QDialog) if w.isVisible()]
    return {f"{type(w).__name__}:{w.windowTitle()}": _rect(w.frameGeometry()) for w in shown}


def _window(window) -> dict:
    pane = window.chat_pane
    new_chat = next(b for b in pane.findChildren(type(pane.send)) if b.text() == window.tr("New chat"))
    return {
        "window": _rect(window.frameGeometry()),
        "client": _rect(window.geometry()),
        "minimum": [window.minimumSizeHint().width(), window.minimumSizeHint().height()],
        "send": _on_screen(pane.send),
        "new_chat": _on_screen(new_chat),
        "status_bar": _on_screen(window.statusBar()),
        "menu_bar": _on_screen(window.menuBar()),
    }


def main(argv: list[str]) -> int:
    from PySide6.QtWidgets import QApplication

    app = QApplication(argv[:1])
    from app.desk.services import DocDesk
    from app.desk.settings import Settings
    from app.gui.main_window import MainWindow

    home = Path(tempfile.mkdtemp())
    os.environ["DOCDESK_CONFIG"] = str(home / "config.toml")  # window.ini beside it: a first start
    library = home / "library"
    screen = app.primaryScreen()
    report = {"available": _rect(screen.availableGeometry()), "scale": screen.devicePixelRatio()}
    window = MainWindow(DocDesk(Settings(library=library)), warm_up=False)
    window.show()
    _settle(app)
    report["first"] = _window(window)
    if len(argv) > 1:  # the whole screen, as a person would see it
        screen.grabWindow(0).save(argv[1])
    report["dialogs"] = _dialogs(window)
    if len(argv) > 1:  # the last dialog opened on top of the others
        screen.grabWindow(0).save(str(Path(argv[1]).with_suffix(".dialogs.png")))
    window.setGeometry(-500, -400, 5000, 4000)  # saved on a larger screen, or one that is gone
    window.close()
    _settle(app)
    again = MainWindow(DocDesk(Settings(library=library)), warm_up=False)
    again.show()
    _settle(app)
    report["restored"] = _window(again)
    again.close()
    print("PROBE " + json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

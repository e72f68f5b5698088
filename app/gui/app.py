"""`docdesk` with no command: the window. It is shown first; the models load behind it."""

from __future__ import annotations

import sys
import time
from pathlib import Path

I18N = Path(__file__).with_name("i18n")


def install_translator(app, language: str):
    """Simplified Chinese when asked for, or when the system locale is Chinese."""
    from PySide6.QtCore import QLocale, QTranslator

    name = language or QLocale.system().name()
    if not name.startswith("zh"):
        return None
    translator = QTranslator(app)
    if not translator.load(str(I18N / "docdesk_zh_CN.qm")):
        return None
    app.installTranslator(translator)
    # Qt's own strings (Save, Cancel, the file dialog) from the translations PySide6 ships.
    from PySide6.QtCore import QLibraryInfo

    qt = QTranslator(app)
    if qt.load("qtbase_zh_CN", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(qt)
    return translator


def run(settings, started: float | None = None) -> int:
    started = started or time.perf_counter()
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("DocDesk")
    app.setOrganizationName("DocDesk")
    icon = Path(__file__).resolve().parent / "icons" / "docdesk.svg"  # package data: in the wheel too
    if icon.exists():
        app.setWindowIcon(QIcon(str(icon)))
    install_translator(app, settings.ui_language)

    from app.desk.crash import CrashGuard
    from app.desk.services import DocDesk
    from app.desk.setting_table import environment
    from app.desk.settings import log_dir
    from app.gui.main_window import MainWindow

    guard = CrashGuard()
    notice = guard.start(log_dir())
    window = MainWindow(DocDesk(settings, guard), crash_notice=notice)
    window.show()
    app.processEvents()
    if environment("DOCDESK_REPORT_STARTUP"):  # read by tests/bench/bench_gui.py
        print(f"window-shown {time.perf_counter() - started:.3f}", flush=True)
    code = app.exec()
    guard.stop()
    return code

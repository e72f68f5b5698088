"""Chinese covers Qt's own strings too: the standard buttons of every dialog (Save, Cancel) come
from the qtbase translations PySide6 ships, loaded beside DocDesk's own; the page labels under an
answer and the format names are Chinese; a language change offers to restart, and the restart
starts DocDesk again."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import contextlib  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from ingest.records import CitedSource  # noqa: E402


@contextlib.contextmanager
def chinese(qapp):
    """The Chinese interface for the block, as `docdesk` installs it."""
    from PySide6.QtCore import QTranslator

    from app.gui.app import install_translator

    before = set(qapp.findChildren(QTranslator))
    assert install_translator(qapp, "zh_CN") is not None
    installed = [t for t in qapp.findChildren(QTranslator) if t not in before]
    try:
        yield
    finally:
        for translator in installed:
            qapp.removeTranslator(translator)
            translator.deleteLater()


def test_qt_standard_buttons_are_chinese_with_the_chinese_interface(qapp):
    from PySide6.QtCore import QTranslator
    from PySide6.QtWidgets import QDialogButtonBox

    from app.gui.app import install_translator

    before = set(qapp.findChildren(QTranslator))
    installed = []
    try:
        translator = install_translator(qapp, "zh_CN")
        assert translator is not None
        installed = [t for t in qapp.findChildren(QTranslator) if t not in before]
        assert len(installed) == 2  # DocDesk's strings and Qt's own
        box = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        assert sorted(button.text() for button in box.buttons()) == sorted(["保存", "取消"])
    finally:
        for translator in installed:
            qapp.removeTranslator(translator)
            translator.deleteLater()
    if not before:  # nothing else translates this process: Qt's English is back
        box = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        assert sorted(button.text() for button in box.buttons()) == ["Cancel", "Save"]


def source(page: int, synthetic: bool = False) -> CitedSource:
    return CitedSource(1, "d" * 64, "Guide", "/docs/guide.pdf", page, page, "text", synthetic_pages=synthetic)


def test_page_labels_under_an_answer_follow_the_interface_language(qapp):
    from app.gui.transcript import shown_label, sources_html

    cited = [source(3)]
    cited[0].cited = True
    assert ", p. 3</a>" in sources_html(cited, 1, "Sources")
    with chinese(qapp):
        assert ", 第 3 页</a>" in sources_html(cited, 1, "来源")
        assert shown_label(source(2, synthetic=True)) == "[1] Guide, 第 ~2 页"
    assert shown_label(source(2, synthetic=True)) == "[1] Guide, p. ~2"


def test_format_names_are_chinese_where_they_are_words(qapp):
    from PySide6.QtCore import QCoreApplication

    from app.gui.format_list import formats_phrase
    from app.gui.library_columns import short_type
    from ingest.readers.registry import supported_formats

    with chinese(qapp):
        assert short_type("text") == "文本" and short_type("image") == "图片" and short_type("pdf") == "PDF"
        phrase = formats_phrase()
        assert "文本" in phrase and "图片" in phrase and " and " not in phrase
        # Every label that is a word (not a product name such as Word or EPUB) has its Chinese.
        for label in supported_formats():
            if any(word[0].islower() for word in label.split()):  # "text", "OpenDocument text"
                assert QCoreApplication.translate("Formats", label) != label, label


def test_a_new_language_offers_a_restart_and_later_keeps_the_window(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from app.desk.services import DocDesk
    from app.desk.settings import Settings, load_settings
    from app.gui.main_window import MainWindow

    monkeypatch.setenv("DOCDESK_CONFIG", str(tmp_path / "config.toml"))
    window = MainWindow(DocDesk(Settings(library=tmp_path / "library")), warm_up=False)
    qtbot.addWidget(window)
    window.show()
    dialog = window.open_settings()
    same = dialog.collect()
    window.settings.apply(same)  # nothing that needs a restart: no question
    assert not any(isinstance(w, QMessageBox) and w.isVisible() for w in window.findChildren(QMessageBox))

    restarts = []
    window.settings.restart_requested.connect(lambda: restarts.append(True))
    changed = dialog.collect()
    changed.ui_language = "zh_CN"
    window.settings.apply(changed)
    box = window.settings.restart_box
    assert box.isVisible() and "Restart DocDesk now?" in box.text()
    assert load_settings().ui_language == "zh_CN"  # saved before the question
    later = next(b for b in box.buttons() if b.text() == "Later")
    later.click()
    assert restarts == [] and window.isVisible()
    assert "next start" in box.text() and "starts again" in window.statusBar().currentMessage()

    changed.library = tmp_path / "other-library"
    window.settings.apply(changed)  # another library folder: asked again
    window.settings.restart_button.click()
    assert restarts == [True]
    dialog.close()
    window.close()


def test_restart_starts_docdesk_again_after_the_window_closed(qtbot, tmp_path, monkeypatch):
    from app.desk.services import DocDesk
    from app.desk.settings import Settings
    from app.gui import restart
    from app.gui.main_window import MainWindow

    command = restart.restart_command()
    assert command[:3] == [sys.executable, "-m", "app"]
    version = subprocess.run([*command[:3], "--version"], capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and "docdesk" in version.stdout.lower()

    marker = tmp_path / "started-again"
    again = [sys.executable, "-c", f"open({str(marker)!r}, 'w').write('yes')"]
    order = []
    window = MainWindow(DocDesk(Settings(library=tmp_path / "library")), warm_up=False)
    qtbot.addWidget(window)
    window.show()
    window.destroyed.connect(lambda: order.append("destroyed"))
    monkeypatch.setattr(restart, "restart_command", lambda: (order.append(window.isVisible()), again)[1])
    window.restart()
    assert order == [False]  # the window had closed (work stopped, the library closed) first
    qtbot.waitUntil(marker.exists, timeout=30_000)

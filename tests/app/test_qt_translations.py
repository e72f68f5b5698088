"""Chinese covers Qt's own strings too: the standard buttons of every dialog (Save, Cancel) come
from the qtbase translations PySide6 ships, loaded beside DocDesk's own."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")


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

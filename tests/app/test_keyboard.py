"""The window by keyboard alone: a menu bar with the platform's standard shortcuts, Tab that leaves
the library table and the question box, and names for screen readers on the main controls."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QKeySequence, QShortcut  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402

from app.desk.services import DocDesk  # noqa: E402
from app.desk.settings import Settings  # noqa: E402
from app.gui.main_window import MainWindow  # noqa: E402
from app.gui.settings_dialog import SettingsDialog  # noqa: E402
from tests.app.test_library_pane import _doc  # noqa: E402


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("DOCDESK_CONFIG", str(tmp_path / "config" / "config.toml"))
    window = MainWindow(DocDesk(Settings(library=tmp_path / "library")), warm_up=False)
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitActive(window)
    yield window
    window.close()


def menus(window) -> dict[str, dict[str, QKeySequence]]:
    """{menu title: {action text: its first shortcut}}, '&' left out."""
    seen = {}
    for top in window.menuBar().actions():
        items = [a for a in top.menu().actions() if not a.isSeparator()]
        seen[top.text().replace("&", "")] = {a.text(): a.shortcut() for a in items}
    return seen


def standard_or(key: QKeySequence.StandardKey, fallback: str) -> QKeySequence:
    return (QKeySequence.keyBindings(key) or [QKeySequence(fallback)])[0]


def test_the_menu_bar_has_every_command_with_a_standard_shortcut(window):
    seen = menus(window)
    assert list(seen) == ["File", "Chat", "Help"]
    assert seen["File"] == {
        "Add documents…": standard_or(QKeySequence.Open, "Ctrl+O"),
        "Filter documents": standard_or(QKeySequence.Find, "Ctrl+F"),
        "Re-index": QKeySequence(),
        "Show in folder": QKeySequence(),
        "Remove from library": QKeySequence(),
        "Settings…": standard_or(QKeySequence.Preferences, "Ctrl+,"),
        "Models…": QKeySequence(),
        "Quit": standard_or(QKeySequence.Quit, "Ctrl+Q"),
    }
    assert seen["Chat"] == {
        "New chat": standard_or(QKeySequence.New, "Ctrl+N"),
        "Ask a question": QKeySequence("Ctrl+L"),
        "Summarize": QKeySequence("Ctrl+Shift+S"),
        "Stop": QKeySequence(Qt.Key_Escape),
    }
    assert list(seen["Help"]) == ["Doctor's report", "About DocDesk"]
    assert window.add_action.iconText() == "Add…"  # the toolbar keeps its short label


def test_no_two_commands_share_a_key(window):
    keys = [a.shortcut().toString() for a in window.findChildren(type(window.add_action)) if not a.shortcut().isEmpty()]
    keys += [s.key().toString() for s in window.findChildren(QShortcut) if s.isEnabled()]
    assert len(keys) == len(set(keys)), sorted(keys)


def test_the_shortcuts_do_what_the_buttons_do(window, qtbot):
    with qtbot.waitSignal(window.chat_pane.chat_selected, timeout=2_000) as new_chat:
        qtbot.keyClick(window, Qt.Key_N, Qt.ControlModifier)
    assert new_chat.args == [""]

    qtbot.keyClick(window, Qt.Key_L, Qt.ControlModifier)
    assert QApplication.focusWidget() is window.chat_pane.question
    qtbot.keyClick(window, Qt.Key_F, Qt.ControlModifier)
    assert QApplication.focusWidget() is window.library_pane.filter

    qtbot.keyClick(window, Qt.Key_S, Qt.ControlModifier | Qt.ShiftModifier)  # nothing selected: it says so
    assert window.statusBar().currentMessage() == "Select a document to summarize"

    assert not window.stop_action.isEnabled()  # as the Stop button: only while an answer is written
    window.chat.busy_changed.emit(True)
    window.chat_pane.question.setFocus()
    with qtbot.waitSignal(window.chat_pane.stop_requested, timeout=2_000):
        qtbot.keyClick(window.chat_pane.question, Qt.Key_Escape)
    window.chat.busy_changed.emit(False)
    assert not window.stop_action.isEnabled()

    window.settings_action.trigger()
    assert isinstance(window.settings.dialog, SettingsDialog) and window.settings.dialog.isVisible()
    window.settings.dialog.reject()
    assert isinstance(window.show_about(), QMessageBox) and window.about_box.isVisible()
    window.about_box.close()

    window.activateWindow()
    qtbot.keyClick(window, Qt.Key_Q, Qt.ControlModifier)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=5_000)


def test_the_library_context_menu_is_in_the_file_menu_too(window, qtbot):
    window.remove_action.trigger()  # nothing selected: it says so
    assert window.statusBar().currentMessage() == "Select a document first"
    window.library_pane.remove_requested.disconnect(window.library.remove)  # the rows are not in the store
    window.library_pane.show_documents([_doc(n) for n in range(1, 4)])
    window.library_pane.table.selectRow(1)
    chosen = [window.library_pane.model.line(1).doc_id]
    with qtbot.waitSignal(window.library_pane.remove_requested, timeout=2_000) as removed:
        window.remove_action.trigger()
    assert removed.args == [chosen]
    with qtbot.waitSignal(window.library_pane.reveal_requested, timeout=2_000) as revealed:
        window.reveal_action.trigger()
    assert revealed.args == chosen


def test_tab_leaves_the_library_table_and_the_question_box(window, qtbot):
    window.library_pane.show_documents([_doc(n) for n in range(1, 31)])
    table = window.library_pane.table
    table.setFocus()
    table.setCurrentIndex(table.model().index(0, 0))
    qtbot.keyClick(table, Qt.Key_Tab)
    assert QApplication.focusWidget() is not table
    assert table.currentIndex().column() == 0  # not moved to the next cell

    question = window.chat_pane.question
    question.setFocus()
    qtbot.keyClick(question, Qt.Key_Tab)
    assert QApplication.focusWidget() is not question and question.toPlainText() == ""
    question.setFocus()
    qtbot.keyClick(question, Qt.Key_Tab, Qt.ShiftModifier)
    assert QApplication.focusWidget() is not question


def test_every_button_and_field_of_the_window_can_take_the_focus_by_tab(window, qtbot):
    """Tab from the filter walks a cycle through the table, the chats, the question and Send."""
    window.library_pane.filter.setFocus()
    seen = []
    for _ in range(40):
        widget = QApplication.focusWidget()
        seen.append(widget)
        qtbot.keyClick(widget, Qt.Key_Tab)
        if QApplication.focusWidget() is window.library_pane.filter:
            break
    pane = window.chat_pane
    new_chat = next(b for b in pane.findChildren(type(pane.send)) if b.text() == "New chat")
    wanted = (window.library_pane.table, pane.chats, new_chat, pane.transcript, pane.question, pane.send)
    assert all(w in seen for w in (*wanted, pane.only_selected)), [w for w in wanted if w not in seen]


def test_the_main_controls_have_accessible_names(window):
    pane, library = window.chat_pane, window.library_pane
    controls = (library.filter, library.table, library.add_button, pane.chats, pane.transcript, pane.question)
    controls += (pane.send, pane.stop, window.engine_label, window.library_label)
    assert all(c.accessibleName() for c in controls), [type(c).__name__ for c in controls if not c.accessibleName()]
    assert pane.question.accessibleName() == "Question" and library.table.accessibleName() == "Documents"

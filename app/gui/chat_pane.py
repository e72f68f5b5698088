"""The chat pane: chats (new, rename, delete), a streamed Markdown transcript with citation links,
a sources strip under each answer, and the question box (Ctrl+Enter sends, Esc stops)."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QInputDialog,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from engine.citations import CITATION, NUMBER, shown_sources

from .format_list import formats_phrase


def _md_text(text: str) -> str:
    """Plain text that Markdown shows as it is."""
    return re.sub(r"([\\`*_\[\]<>#])", r"\\\1", html.unescape(text))


def _citation_links(match: re.Match, message: int) -> str:
    """`[n]` as one link; `[1, 2]` as written, each number its own link."""
    numbers = match.group(1)
    if numbers.isdigit():
        return f"[\\[{numbers}\\]](cite:{message}/{numbers})"
    linked = NUMBER.sub(lambda n: f"[{n.group()}](cite:{message}/{n.group()})", numbers)
    return f"\\[{linked}\\]"


def answer_markdown(text: str, message: int) -> str:
    """An answer with each citation turned into links the window opens at the cited page. Raw HTML
    a model writes ("</pre>") is shown as text, or it would swallow the rest of the transcript."""
    text = text.replace("<", "\\<")
    return CITATION.sub(lambda m: _citation_links(m, message), text)


class ChatPane(QWidget):
    send_requested = Signal(str)
    stop_requested = Signal()
    citation_clicked = Signal(int, int)  # message index, source number
    chat_selected = Signal(str)  # "" for a new chat
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)
    passages_requested = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(self._chat_list())
        self.splitter.addWidget(self._conversation())
        self.splitter.setStretchFactor(1, 3)
        self.splitter.setSizes([200, 700])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        QShortcut(QKeySequence("Ctrl+Return"), self.question, self._send)
        QShortcut(QKeySequence("Ctrl+Enter"), self.question, self._send)
        QShortcut(QKeySequence(Qt.Key_Escape), self, self.stop_requested.emit)

        self.messages: list[dict] = []  # {"role", "text", "sources": [CitedSource], "pending": bool}
        self.chat_id = ""
        self.render()  # the first-run hint

    def _chat_list(self) -> QWidget:
        self.chats = QListWidget()
        self.chats.currentItemChanged.connect(self._chat_changed)
        new = QPushButton(self.tr("New chat"))
        new.clicked.connect(self.new_chat)
        rename = QPushButton(self.tr("Rename"))
        rename.clicked.connect(self._rename)
        delete = QPushButton(self.tr("Delete"))
        delete.clicked.connect(self._delete)
        chat_buttons = QHBoxLayout()
        for button in (new, rename, delete):
            chat_buttons.addWidget(button)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.chats)
        left_layout.addLayout(chat_buttons)
        return left

    def _conversation(self) -> QWidget:
        self.transcript = QTextBrowser()
        self.transcript.setOpenLinks(False)
        self.transcript.anchorClicked.connect(self._link)
        self.question = QPlainTextEdit(placeholderText=self.tr("Ask your documents… (Ctrl+Enter to send)"))
        self.question.setMaximumHeight(90)
        self.send = QPushButton(self.tr("Send"))
        self.send.clicked.connect(self._send)
        self.stop = QPushButton(self.tr("Stop"))
        self.stop.setEnabled(False)
        self.stop.clicked.connect(self.stop_requested)
        self.only_selected = QCheckBox(self.tr("Only the selected documents"))
        self.show_passages = QPushButton(self.tr("Show retrieved passages"))
        self.show_passages.setEnabled(False)
        self.show_passages.clicked.connect(lambda: self.passages_requested.emit(len(self.messages) - 1))
        row = QHBoxLayout()
        row.addWidget(self.only_selected)
        row.addStretch(1)
        row.addWidget(self.show_passages)
        row.addWidget(self.stop)
        row.addWidget(self.send)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.transcript, 1)
        right_layout.addWidget(self.question)
        right_layout.addLayout(row)
        return right

    # -- chats --------------------------------------------------------------------------
    def show_chats(self, chats, current: str = "") -> None:
        self.chats.blockSignals(True)
        self.chats.clear()
        for chat in chats:
            item = QListWidgetItem(chat.title or chat.id)
            item.setData(Qt.UserRole, chat.id)
            self.chats.addItem(item)
            if chat.id == current:
                self.chats.setCurrentItem(item)
        self.chats.blockSignals(False)

    def new_chat(self) -> None:
        self.chats.clearSelection()
        self.chats.setCurrentItem(None)
        self.chat_id = ""
        self.show_messages([])
        self.chat_selected.emit("")

    def _chat_changed(self, item, _previous) -> None:
        if item is not None:
            self.chat_id = item.data(Qt.UserRole)
            self.chat_selected.emit(self.chat_id)

    def _rename(self) -> None:
        item = self.chats.currentItem()
        if item is None:
            return
        title, ok = QInputDialog.getText(self, self.tr("Rename chat"), self.tr("Title:"), text=item.text())
        if ok and title.strip():
            self.rename_requested.emit(item.data(Qt.UserRole), title.strip())

    def _delete(self) -> None:
        item = self.chats.currentItem()
        if item is not None:
            self.delete_requested.emit(item.data(Qt.UserRole))

    # -- transcript -----------------------------------------------------------------------
    def show_messages(self, messages: list[dict]) -> None:
        self.messages = messages
        self.render()

    def render(self) -> None:
        parts = []
        you, sources_label = self.tr("You"), self.tr("Sources")
        for i, m in enumerate(self.messages):
            if m["role"] == "user":
                parts.append(f"**{you}:** {_md_text(m['text'])}")
                continue
            text = m["text"] or ("…" if m.get("pending") else "")
            parts.append(f"**DocDesk:** {answer_markdown(text, i)}")
            cited = shown_sources(m.get("sources", []))
            if cited and not m.get("pending"):
                strip = " · ".join(f"[\\[{s.n}\\] {_md_text(s.name)}, {s.page_label}](cite:{i}/{s.n})" for s in cited)
                parts.append(f"*{sources_label}:* {strip}")
        if not parts:  # first run, or a new chat: say what to do
            parts.append(
                self.tr(
                    "Drop documents on the window (%1), then ask a question below. "
                    "Answers cite the document and page they come from; click a citation to see it."
                ).replace("%1", formats_phrase())
            )
        bar = self.transcript.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        self.transcript.setMarkdown("\n\n".join(parts))
        if at_end:
            bar.setValue(bar.maximum())

    def append_text(self, text: str) -> None:
        if self.messages and self.messages[-1]["role"] == "assistant":
            self.messages[-1]["text"] += text
            self.render()

    def set_busy(self, busy: bool) -> None:
        self.send.setEnabled(not busy)
        self.stop.setEnabled(busy)
        self.show_passages.setEnabled(not busy and any(m["role"] == "assistant" for m in self.messages))

    def _send(self) -> None:
        text = self.question.toPlainText().strip()
        if text and self.send.isEnabled():
            self.question.clear()
            self.send_requested.emit(text)

    def _link(self, url: QUrl) -> None:
        if url.scheme() == "cite":
            message, _, n = url.path().partition("/")
            self.citation_clicked.emit(int(message), int(n))

"""The chat pane: chats (new, rename, delete), a streamed transcript with citation links (each
message rendered on its own: app/gui/transcript.py), a sources strip under each answer, the
first-run guide while a chat is empty, and the question box (Ctrl+Enter sends, Esc stops)."""

from __future__ import annotations

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
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

from app.gui.first_run import FirstRunGuide
from app.gui.transcript import TranscriptRenderer


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
        self.guide = FirstRunGuide(self)
        self.first_run_note = ""  # the GPU sentence, once the doctor has looked
        self._renderer = TranscriptRenderer(self.tr("You"), self.tr("Sources"))
        self._shown: list[str] = []  # each message's HTML as the transcript shows it
        self._tail_start = 0  # where the last message begins in the transcript
        self.render()  # the first-run guide

    def _chat_list(self) -> QWidget:
        self.chats = QListWidget()
        self.chats.currentItemChanged.connect(self._chat_changed)
        new = QPushButton(self.tr("New chat"))
        new.clicked.connect(self.new_chat)
        rename = QPushButton(self.tr("Rename"))
        rename.clicked.connect(self._rename)
        delete = QPushButton(self.tr("Delete"))
        delete.clicked.connect(self._delete)
        # New chat above Rename and Delete: the list stays narrow, the transcript gets the room.
        chat_buttons = QGridLayout()
        chat_buttons.addWidget(new, 0, 0, 1, 2)
        chat_buttons.addWidget(rename, 1, 0)
        chat_buttons.addWidget(delete, 1, 1)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.chats)
        left_layout.addLayout(chat_buttons)
        return left

    def _conversation(self) -> QWidget:
        self.transcript = QTextBrowser()
        self.transcript.document().setUndoRedoEnabled(False)  # edited as an answer streams in
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
        # Two lines, so that the pane fits a laptop beside a library it does not squeeze.
        options = QHBoxLayout()
        options.addWidget(self.only_selected)
        options.addStretch(1)
        options.addWidget(self.show_passages)
        row = QVBoxLayout()
        row.addLayout(options)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.stop)
        buttons.addWidget(self.send)
        row.addLayout(buttons)
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
        """Show the messages; while an answer streams in, only the last message is rendered and
        replaced, the rest of the transcript stays as it is."""
        bar = self.transcript.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        shown = [self._renderer.message_html(m, i) for i, m in enumerate(self.messages)]
        if not shown:
            self.transcript.setHtml(self.guide.html(self.first_run_note))
        elif len(shown) == len(self._shown) and shown[:-1] == self._shown[:-1]:
            if shown[-1] != self._shown[-1]:
                self._replace_tail(shown[-1])
        elif self._shown and shown[: len(self._shown)] == self._shown:  # a question and its answer added
            for added in shown[len(self._shown) :]:
                self._tail_start = self.transcript.document().characterCount() - 1
                self._replace_tail(added)
        else:
            self.transcript.setHtml("\n".join(shown[:-1]))
            self._tail_start = self.transcript.document().characterCount() - 1 if len(shown) > 1 else 0
            self._replace_tail(shown[-1])
        self._shown = shown
        if at_end:
            bar.setValue(bar.maximum())

    def _replace_tail(self, last: str) -> None:
        cursor = QTextCursor(self.transcript.document())
        cursor.setPosition(self._tail_start)
        cursor.movePosition(QTextCursor.End, QTextCursor.KeepAnchor)
        cursor.removeSelectedText()
        if self._tail_start:  # a paragraph of its own after the others: never part of their code block or list
            paragraph = QTextBlockFormat()
            paragraph.setTopMargin(12)
            paragraph.setBottomMargin(12)
            cursor.insertBlock(paragraph, QTextCharFormat())
        cursor.insertHtml(last)

    def set_first_run_note(self, text: str) -> None:
        """The guide's GPU sentence (FirstRunGuide.check finds it)."""
        self.first_run_note = text
        if not self.messages:
            self.render()

    def check_gpu(self, workers, llm) -> None:
        """Look for the GPU on `workers` and put what it means into the guide."""
        self.guide.check(workers, self, llm)

    def append_text(self, text: str) -> None:
        self.append_piece("answer", text)

    def append_piece(self, kind: str, text: str) -> None:
        """A streamed piece of the answer being written: its text, a thinking model's reasoning,
        or "restart" (what was shown was taken for the wrong one: drop both)."""
        if not self.messages or self.messages[-1]["role"] != "assistant":
            return
        message = self.messages[-1]
        if kind == "restart":
            message["text"], message["reasoning"] = "", ""
        elif kind == "reasoning":
            message["reasoning"] = message.get("reasoning", "") + text
        else:
            message["text"] += text
        self.render()

    def toggle_reasoning(self, index: int) -> None:
        """Show or hide an answer's reasoning (the "Thought for 12 s" link)."""
        if 0 <= index < len(self.messages):
            message = self.messages[index]
            message["show_reasoning"] = not message.get("show_reasoning")
            self.render()

    def set_busy(self, busy: bool) -> None:
        self.send.setEnabled(not busy)
        self.stop.setEnabled(busy)
        self.show_passages.setEnabled(not busy and any(m["role"] == "assistant" for m in self.messages))

    def restore_question(self, text: str) -> None:
        """A question that was not asked, back in the box (before what was typed since)."""
        typed = self.question.toPlainText().strip()
        self.question.setPlainText(text + ("\n" + typed if typed else ""))
        self.question.setFocus()

    def _send(self) -> None:
        text = self.question.toPlainText().strip()
        if text and self.send.isEnabled():
            self.question.clear()
            self.send_requested.emit(text)

    def _link(self, url: QUrl) -> None:
        if url.scheme() == "think":
            self.toggle_reasoning(int(url.path()))
            return
        if url.scheme() == "cite":
            message, _, n = url.path().partition("/")
            self.citation_clicked.emit(int(message), int(n))

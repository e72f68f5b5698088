"""The chat side of the window: the chat list, asking with a streamed answer, stopping, citations."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QDialog, QLabel, QTextBrowser, QVBoxLayout, QWidget

from app.desk.answering import Answered, final_answer
from app.desk.services import DocDesk
from app.gui.chat_pane import ChatPane
from app.gui.document_opener import DocumentOpener
from app.gui.library_pane import LibraryPane
from app.gui.ops import Op, describe
from app.gui.tasks import TextBuffer, Workers
from app.gui.transcript import shown_label, shown_page_label


class ChatController(QObject):
    answer_finished = Signal(object)  # the app.desk.answering.Answered record, or None when it failed
    busy_changed = Signal(bool)  # an answer is being written (or waits to be)
    failed = Signal(str)  # why an answer could not be written
    notice = Signal(str)  # a word for the status bar

    def __init__(
        self,
        desk: DocDesk,
        workers: Workers,
        pane: ChatPane,
        library_pane: LibraryPane,
        opener: DocumentOpener,
        window: QWidget,
    ) -> None:
        super().__init__(window)
        self.desk, self.workers, self.pane, self.library_pane, self.opener, self.window = (
            desk,
            workers,
            pane,
            library_pane,
            opener,
            window,
        )
        self.answer_op: Op | None = None
        self._buffer: TextBuffer | None = None
        self._waiting = False  # the question waits for the model (behind a summary, a model load)
        self.summary_event = None  # the running summary's last progress event, None when none runs
        pane.send_requested.connect(self.ask)
        pane.stop_requested.connect(self.stop)
        pane.citation_clicked.connect(self.open_citation)
        pane.chat_selected.connect(self.load_chat)
        pane.rename_requested.connect(self.rename_chat)
        pane.delete_requested.connect(self.delete_chat)
        pane.passages_requested.connect(self.show_passages)

    # -- chats ------------------------------------------------------------------------------
    def refresh_chats(self, current: str = "") -> None:
        Op(self.workers, "store", "chats", lambda _ctx: self.desk.list_chats()).success(
            lambda chats: self.pane.show_chats(chats, current)
        ).run()

    def load_chat(self, chat_id: str) -> None:
        def read(_ctx):
            if not chat_id:
                return []
            return [{"role": m.role, "text": m.content, "sources": m.sources} for m in self.desk.chat_messages(chat_id)]

        def show(messages) -> None:
            self.pane.show_messages(messages)
            self.pane.set_busy(self.answer_op is not None)

        Op(self.workers, "store", "chat", read).success(show).run()

    def rename_chat(self, chat_id: str, title: str) -> None:
        Op(self.workers, "store", "rename", lambda _ctx: self.desk.rename_chat(chat_id, title)).success(
            lambda _r: self.refresh_chats(chat_id)
        ).run()

    def delete_chat(self, chat_id: str) -> None:
        def deleted(_r) -> None:
            self.refresh_chats()
            self.pane.new_chat()

        Op(self.workers, "store", "delete", lambda _ctx: self.desk.delete_chat(chat_id)).success(deleted).run()

    # -- asking -----------------------------------------------------------------------------
    def ask(self, question: str) -> None:
        if self.answer_op is not None:
            return
        pane = self.pane
        doc_ids = self.library_pane.selected_ids() if pane.only_selected.isChecked() else None
        pane.messages.append({"role": "user", "text": question})
        pane.messages.append({"role": "assistant", "text": "", "sources": [], "pending": True})
        buffer = self._buffer = TextBuffer(pane.append_text, on_piece=pane.append_piece)
        chat_id = pane.chat_id or None

        def work(ctx):  # Stop sets ctx.cancel: the model stops at its next token
            events = self.desk.answer(question, doc_ids, chat_id=chat_id, cancel=ctx.cancel)
            reasoning, restart = (lambda text: buffer.append(text, "reasoning")), (lambda: buffer.append("", "restart"))
            return final_answer(events, buffer.append, reasoning, restart)

        # A model with parallel slots (a server) answers beside a summary; a model that writes one
        # reply at a time (llama.cpp in-process) takes the question after it, and the transcript
        # says so until then.
        pool = "answer" if self.desk.parallel_answers() > 1 else "engine"
        self._waiting = True
        self._show_waiting()
        op = Op(self.workers, pool, "ask", work).started(self._started).success(self._answered)
        op = op.failure(self._failed).cancelled(lambda _stopped: self._not_asked(question))
        self.answer_op = op.busy(self._busy).run()

    def summary_progressed(self, event) -> None:
        """The running summary's progress (None: it ended): a question waiting behind it says how long."""
        self.summary_event = event
        if self._waiting:
            self._show_waiting()

    def _waiting_words(self) -> str:
        event = self.summary_event
        if event is None:
            return self.tr("Waits for the model…")
        if event.stage == "map":
            words = self.tr("Waits for the summary: %1 of %2 blocks left")
            return words.replace("%1", str(event.total - event.done)).replace("%2", str(event.total))
        return self.tr("Waits for the summary: combining its blocks")

    def _show_waiting(self) -> None:
        message = self.pane.messages[-1] if self.pane.messages else None
        if message is not None and message.get("pending"):
            message["waiting"] = self._waiting_words() + " " + self.tr("(Stop keeps your question)")
            self.pane.render()

    def _started(self, _none) -> None:
        """A worker took the question up: the model is writing it now."""
        self._waiting = False
        message = self.pane.messages[-1] if self.pane.messages else None
        if message is not None and message.get("pending"):
            message.pop("waiting", None)
            self.pane.render()

    def _not_asked(self, question: str) -> None:
        """Stopped before the model began: the question goes back into the question box, unasked."""
        self._stop_stream()
        messages = self.pane.messages
        if len(messages) >= 2 and messages[-1].get("pending") and messages[-2]["text"] == question:
            del messages[-2:]
        self.pane.render()
        self.pane.restore_question(question)
        self.notice.emit(self.tr("Not asked: your question is back in the question box"))
        self.answer_finished.emit(None)

    def _busy(self, busy: bool) -> None:
        if not busy:
            self._stop_stream()
            self.answer_op = None
            self._waiting = False
        self.pane.set_busy(busy)
        self.busy_changed.emit(busy)

    def _stop_stream(self) -> None:
        """The last streamed text is shown before the final answer (or the failure) replaces it."""
        if self._buffer is not None:
            self._buffer.stop()
            self._buffer = None

    def _answered(self, answer: Answered) -> None:
        self._stop_stream()
        message = self.pane.messages[-1]
        # Every source the model was given: the strip under the answer shows the cited ones, the
        # "Show retrieved passages" dialog all of them.
        message.update(text=answer.text, sources=answer.given, pending=False)
        message.update(reasoning=answer.reasoning, thinking_ms=answer.thinking_ms, whole=answer.whole_documents)
        message.update(stages=answer.stages, relevance=answer.relevance)  # how it was prepared: the passages view
        if answer.cancelled:
            message["text"] += "\n\n_" + self.tr("(stopped)") + "_"
        self.pane.chat_id = answer.chat_id
        self.refresh_chats(answer.chat_id)
        self.pane.render()
        self.answer_finished.emit(answer)

    def _failed(self, exc: BaseException) -> None:
        self._stop_stream()
        reason = describe(exc)
        message = self.pane.messages[-1]
        message.update(text=self.tr("Could not answer: %1").replace("%1", reason), pending=False)
        self.pane.render()
        self.failed.emit(reason)
        self.answer_finished.emit(None)

    def stop(self) -> None:
        if self.answer_op is not None:
            self.answer_op.cancel()

    # -- sources ----------------------------------------------------------------------------
    def show_passages(self, index: int) -> None:
        messages = self.pane.messages
        if not (0 <= index < len(messages)) or messages[index]["role"] != "assistant":
            return
        dialog = QDialog(self.window)
        dialog.setWindowTitle(self.tr("Retrieved passages"))
        dialog.resize(760, 700)
        layout = QVBoxLayout(dialog)
        lines = self.preparation_lines(messages[index])
        if lines:  # an answer of this session: how its question was prepared (a chat read back has none)
            details = QLabel("\n".join(lines))
            details.setObjectName("answerPreparation")
            details.setWordWrap(True)
            details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(details)
        browser = QTextBrowser()
        parts = [self.tr("What the model was given for this answer:")]
        parts += [self.passage_markdown(s) for s in messages[index].get("sources", [])]
        browser.setMarkdown("\n\n".join(parts))
        layout.addWidget(browser)
        dialog.show()
        self._passages_dialog = dialog

    def passage_markdown(self, source) -> str:
        """A source as the passages view shows it: its label and page, whether it is the passage's
        sentences that answer (the rest did not fit the context's budget) or the passage whole."""
        heading = f"### {shown_label(source)}"
        if getattr(source, "excerpt", False):
            note = self.tr("Excerpt: the sentences of this passage that answer, %1; the rest did not fit.")
            heading += "\n\n*" + note.replace("%1", shown_page_label(source)) + "*"
        return f"{heading}\n\n{source.text}"

    def preparation_lines(self, message: dict) -> list[str]:
        """The answer's stages with their times, and why the relevance rule let the model answer (or
        not) and what overruled it: read-only lines above the passages."""
        lines = []
        stages = message.get("stages") or ()
        if stages:
            steps = " · ".join(f"{name} {ms:.0f} ms" for name, ms in stages)
            lines.append(self.tr("Stages: %1").replace("%1", steps))
        why = message.get("relevance") or {}
        if "margin" in why:
            verdict = self.tr("relevant") if why["relevant"] else self.tr("nothing relevant")
            words = self.tr("Relevance: %1 (keyword coverage %2, dense score %3, margin %4)")
            for mark, value in (("%1", verdict), ("%2", f"{why['coverage']:.2f}"), ("%3", f"{why['dense']:.2f}")):
                words = words.replace(mark, value)
            line = words.replace("%4", f"{why['margin']:+.2f}")
            if why.get("override"):
                line += " · " + self.tr("answered anyway: %1").replace("%1", why["override"])
            lines.append(line)
        for note in why.get("skipped", []):  # a side request that failed or overran: the answer went on
            lines.append(self.tr("Skipped (the answer went on without it): %1").replace("%1", note))
        return lines

    def open_citation(self, message: int, n: int) -> None:
        messages = self.pane.messages
        if not 0 <= message < len(messages):
            return
        source = next((s for s in messages[message].get("sources", []) if s.n == n), None)
        if source is not None:
            self.opener.open(source.doc_id, source.page, source.text)

"""A chat: questions answered one after another, with the history kept in the library."""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator

from engine.answer import Answer, Answerer, ReasoningDelta, Sampling, TextDelta, Turn, run_to_end
from ingest.store.chats import Chat, ChatMessage, ChatStore

# The reply kept for a question that got no answer (the model or a server failed): shown as it is
# where the chat is read back, and left out of the history later questions are answered from.
FAILED = "⚠ DocDesk could not answer: "


class ChatSession:
    def __init__(self, answerer: Answerer, store: ChatStore, chat_id: str | None = None) -> None:
        self.answerer = answerer
        self.store = store
        self.chat: Chat | None = store.get(chat_id) if chat_id else None

    def history(self) -> list[Turn]:
        if self.chat is None:
            return []
        turns: list[Turn] = []
        question = ""
        for message in self.store.messages(self.chat.id):
            if message.role == "user":
                question = message.content
            elif not message.content.startswith(FAILED):  # a failed turn is no history to answer from
                turns.append(Turn(question, message.content, message.sources))
        return turns

    def stream(
        self,
        question: str,
        doc_ids: list[str] | None = None,
        cancel: threading.Event | None = None,
        sampling: Sampling | None = None,
    ) -> Generator[TextDelta | ReasoningDelta, None, Answer]:
        """Answerer.stream for the next question of the chat, the exchange kept in the store."""
        history = self.history()
        if self.chat is None:
            self.chat = self.store.create(question[:60])
        # The question is kept before anything can fail: a crash in the model loses only the answer.
        asked = self.store.add_message(self.chat.id, ChatMessage("user", question))
        try:
            prepared = self.answerer.prepare(question, doc_ids, history, cancel)
        except Exception as exc:
            self.store.add_message(self.chat.id, ChatMessage("assistant", f"{FAILED}{exc}"))
            raise
        if prepared.standalone:
            self.store.set_question(asked, prepared.standalone)
        try:
            answer = yield from self.answerer.stream(prepared, cancel, sampling)
        except Exception as exc:  # the question keeps its reply: that it failed, and why
            self.store.add_message(self.chat.id, ChatMessage("assistant", f"{FAILED}{exc}"))
            raise
        self.store.add_message(self.chat.id, ChatMessage("assistant", answer.text, sources=answer.cited_sources()))
        return answer

    def ask(
        self,
        question: str,
        doc_ids: list[str] | None = None,
        on_text: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Answer:
        return run_to_end(self.stream(question, doc_ids, cancel), on_text)

"""Chats where the library cannot be written (read-only, the disk full): the question is answered
all the same, and the chat is kept in memory instead of failing the answer."""

from __future__ import annotations

import logging
import time
import uuid

from ingest.store.chats import Chat, ChatMessage, ChatStore
from ingest.store.open_errors import LibraryFull, LibraryReadOnly

log = logging.getLogger(__name__)


class ChatsSavedWherePossible(ChatStore):
    """Saves as ChatStore does; what cannot be written stays in this object. `unsaved` says why."""

    def __init__(self, library) -> None:
        super().__init__(library)
        self.unsaved: str = ""  # the reason, once a write failed
        self._new: dict[str, Chat] = {}
        self._messages: dict[str, list[ChatMessage]] = {}
        self._kept: dict[int, ChatMessage] = {}  # unsaved messages by their (negative) ids

    def create(self, title: str = "") -> Chat:
        try:
            return super().create(title)
        except (LibraryFull, LibraryReadOnly) as exc:
            self.unsaved = str(exc)
        now = time.time()
        chat = Chat(uuid.uuid4().hex[:12], title.strip()[:120], now, now)
        self._new[chat.id] = chat
        return chat

    def get(self, chat_id: str) -> Chat:
        return self._new[chat_id] if chat_id in self._new else super().get(chat_id)

    def messages(self, chat_id: str) -> list[ChatMessage]:
        stored = [] if chat_id in self._new else super().messages(chat_id)
        return stored + self._messages.get(chat_id, [])

    def add_message(self, chat_id: str, message: ChatMessage) -> int:
        if chat_id not in self._new and not self.unsaved:
            try:
                return super().add_message(chat_id, message)
            except (LibraryFull, LibraryReadOnly) as exc:
                self.unsaved = str(exc)
        log.info("chat %s is not saved: %s", chat_id, self.unsaved)
        self._messages.setdefault(chat_id, []).append(message)
        self._kept[-len(self._kept) - 1] = message  # ids of their own kind: negative, never a row's
        return -len(self._kept)

    def set_question(self, message_id: int, standalone: str) -> None:
        if message_id in self._kept:
            self._kept[message_id].question = standalone
        else:
            super().set_question(message_id, standalone)

"""Chats and their messages, kept in the library so that a conversation can be listed and continued."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field

from ingest.errors import LibraryError
from ingest.records import CitedSource
from ingest.store.library import Library


@dataclass
class ChatMessage:
    role: str  # user | assistant
    content: str
    question: str = ""  # user turns: the stand-alone question that was searched
    sources: list[CitedSource] = field(default_factory=list)  # assistant turns: what the model was given
    id: int = 0
    created_at: float = 0.0


@dataclass
class Chat:
    id: str
    title: str
    created_at: float
    updated_at: float
    messages: int = 0

    def as_dict(self) -> dict:
        return {
            "chat_id": self.id,
            "title": self.title,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "messages": self.messages,
        }


class ChatStore:
    def __init__(self, library: Library) -> None:
        self.library = library

    def create(self, title: str = "") -> Chat:
        now = time.time()
        chat = Chat(uuid.uuid4().hex[:12], title.strip()[:120], now, now)
        with self.library.transaction() as conn:
            conn.execute(
                "INSERT INTO chats (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (chat.id, chat.title, now, now),
            )
        return chat

    def get(self, chat_id: str) -> Chat:
        """A chat by id or unique id prefix."""
        rows = self.library.conn.execute(
            "SELECT c.id, c.title, c.created_at, c.updated_at, count(m.id) FROM chats c "
            "LEFT JOIN messages m ON m.chat_id = c.id WHERE c.id LIKE ? GROUP BY c.id",
            (chat_id.replace("%", "").replace("_", "") + "%",),
        ).fetchall()
        if len(rows) != 1:
            problem = "no chat" if not rows else "more than one chat starts with"
            raise LibraryError(f"{problem} {chat_id!r} (see `docdesk chats`)")
        return Chat(*rows[0])

    def list(self) -> list[Chat]:
        rows = self.library.conn.execute(
            "SELECT c.id, c.title, c.created_at, c.updated_at, count(m.id) FROM chats c "
            "LEFT JOIN messages m ON m.chat_id = c.id GROUP BY c.id ORDER BY c.updated_at DESC"
        )
        return [Chat(*r) for r in rows]

    def rename(self, chat_id: str, title: str) -> None:
        with self.library.transaction() as conn:
            conn.execute("UPDATE chats SET title = ? WHERE id = ?", (title.strip()[:120], chat_id))

    def delete(self, chat_id: str) -> None:
        with self.library.transaction() as conn:
            conn.execute("DELETE FROM chats WHERE id = ?", (chat_id,))

    def messages(self, chat_id: str) -> list[ChatMessage]:
        rows = self.library.conn.execute(
            "SELECT id, role, content, question, sources, created_at FROM messages WHERE chat_id = ? ORDER BY id",
            (chat_id,),
        )
        return [
            ChatMessage(r[1], r[2], r[3], [CitedSource.from_json(s) for s in json.loads(r[4])], r[0], r[5])
            for r in rows
        ]

    def add_message(self, chat_id: str, message: ChatMessage) -> int:
        """Store one message now. A question is stored before its answer is generated, so a crash
        in the model loses the answer only; the chat then ends on an unanswered question."""
        now = time.time()
        with self.library.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO messages (chat_id, role, content, question, sources, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    chat_id,
                    message.role,
                    message.content,
                    message.question,
                    json.dumps([s.to_json() for s in message.sources], ensure_ascii=False),
                    now,
                ),
            )
            conn.execute("UPDATE chats SET updated_at = ? WHERE id = ?", (now, chat_id))
            return cursor.lastrowid

    def set_question(self, message_id: int, standalone: str) -> None:
        """The stand-alone form of a stored question, once the follow-up was rewritten."""
        with self.library.transaction() as conn:
            conn.execute("UPDATE messages SET question = ? WHERE id = ?", (standalone, message_id))

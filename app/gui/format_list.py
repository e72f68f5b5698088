"""The formats DocDesk reads, as one translated phrase for the window's hints, from the format
table (ingest/readers/registry.py): a format added there shows here without a change."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from ingest.readers.registry import format_groups

CONTEXT = "Formats"  # translate.py fills this context from the table's words


def formats_phrase() -> str:
    """"PDF, Word, …, text and images", or "PDF、Word、…、文本和图片" in Chinese."""
    words = [QCoreApplication.translate(CONTEXT, word) for word in format_groups()]
    if len(words) == 1:
        return words[0]
    head = QCoreApplication.translate(CONTEXT, ", ").join(words[:-1])
    return QCoreApplication.translate(CONTEXT, "%1 and %2").replace("%1", head).replace("%2", words[-1])

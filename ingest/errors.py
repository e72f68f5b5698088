"""Exceptions raised by ingest. Messages say what was wrong and what to do."""

from __future__ import annotations


class IngestError(Exception):
    """Base class: a document could not be read or stored."""


class UnsupportedFormat(IngestError):
    """The file's content is not a format DocDesk reads."""


class EncryptedDocument(IngestError):
    """The document needs a password (or the given one was wrong)."""


class DamagedDocument(IngestError):
    """The file is corrupt beyond what the reader can recover."""


class OversizedDocument(IngestError):
    """The file expands beyond DocDesk's input limits (a zip bomb, or far larger than any real document)."""


class EmptyDocument(IngestError):
    """The file holds no text that could be indexed."""


class LibraryError(IngestError):
    """The library folder cannot be opened or is in an unexpected state."""


class EmbedderLeftBehind(LibraryError):
    """The library was converted away from this DocDesk's embedding model (ingest/store/embedder_owner.py)."""


class EmbeddingModelError(IngestError):
    """The embedding model cannot be found or loaded."""

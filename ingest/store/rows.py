"""The rows a library hands out, and how they are read from SQLite."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field

from ingest.records import Chunks, ReadResult, page_label


@dataclass
class DocumentRow:
    id: str
    path: str
    title: str
    format: str
    pages: int
    synthetic_pages: bool
    size: int
    mtime: float
    language: str
    status: str
    reason: str
    warnings: list[str]
    embed_model: str
    added_at: float
    indexed_at: float | None
    blocks: int = 0
    passages: int = 0
    ocr_pages: int = 0  # pages whose text came from OCR
    ocr_confidence: float | None = None  # their mean line confidence

    def as_dict(self) -> dict:
        return {
            "doc_id": self.id,
            "path": self.path,
            "title": self.title,
            "format": self.format,
            "pages": self.pages,
            "blocks": self.blocks,
            "passages": self.passages,
            "status": self.status,
            "reason": self.reason,
            "synthetic_pages": self.synthetic_pages,
            "ocr": self.ocr_pages > 0,
            "ocr_pages": self.ocr_pages,
            "ocr_confidence": None if self.ocr_confidence is None else round(self.ocr_confidence, 3),
            "warnings": self.warnings,
            "language": self.language,
            "size": self.size,
            "added_at": self.added_at,
        }


@dataclass
class PassageRow:
    id: int
    doc_id: str
    block_id: int
    ordinal: int
    page: int
    page_end: int
    start: int
    end: int
    text: str
    title: str
    path: str
    synthetic_pages: bool = False  # page numbers were made up (~3,000 characters each)

    @property
    def page_label(self) -> str:
        return page_label(self.page, synthetic=self.synthetic_pages)


@dataclass
class FileRecord:
    path: str
    doc_id: str
    size: int
    mtime: float
    folder_id: int | None = None


@dataclass
class IndexedDocument:
    """Everything one transaction writes for a successfully read document."""

    doc_id: str
    file: FileRecord
    read: ReadResult
    chunks: Chunks
    vectors: object  # numpy float32 array, one row per passage
    language: str
    embed_model: str
    extra_warnings: list[str] = field(default_factory=list)


DOC_COLUMNS = (
    "d.id, d.path, d.title, d.format, d.pages, d.synthetic_pages, d.size, d.mtime, d.language, d.status, "
    "d.reason, d.warnings, d.embed_model, d.added_at, d.indexed_at"
)

COUNTS = (
    "(SELECT count(*) FROM passages p WHERE p.doc_id = d.id) AS passages, "
    "(SELECT count(*) FROM blocks b WHERE b.doc_id = d.id) AS blocks, "
    "(SELECT count(*) FROM ocr_pages o WHERE o.doc_id = d.id) AS ocr_pages, "
    "(SELECT avg(o.confidence) FROM ocr_pages o WHERE o.doc_id = d.id) AS ocr_confidence"
)


def document_row(row: sqlite3.Row) -> DocumentRow:
    values = dict(row)
    values["warnings"] = json.loads(values["warnings"] or "[]")
    values["synthetic_pages"] = bool(values["synthetic_pages"])
    return DocumentRow(**values)


PASSAGE_SELECT = (
    "SELECT p.id, p.doc_id, p.block_id, p.ordinal, p.page, p.page_end, p.start, p.end, p.text, d.title, d.path, "
    "d.synthetic_pages FROM passages p JOIN documents d ON d.id = p.doc_id "
)


def passage_row(row) -> PassageRow:
    """A row of PASSAGE_SELECT."""
    return PassageRow(*row[:-1], synthetic_pages=bool(row[-1]))

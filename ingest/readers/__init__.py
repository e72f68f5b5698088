"""Readers turn a file into pages of normalized text; `read_document` picks one by content."""

from __future__ import annotations

from pathlib import Path

from ..errors import EmptyDocument
from ..records import ReadResult
from ..sniff import detect_format
from .docx import read_docx
from .html import read_html
from .pdf import read_pdf
from .text import read_text

__all__ = ["read_document"]


def read_document(path: Path, password: str | None = None) -> ReadResult:
    fmt = detect_format(path)
    if fmt == "pdf":
        result = read_pdf(path, password)
    elif fmt == "docx":
        result = read_docx(path)
    elif fmt == "html":
        result = read_html(path)
    else:
        result = read_text(path)
    if not any(page.text.strip() for page in result.pages):
        if fmt == "pdf":
            raise EmptyDocument(
                f"no text layer (scanned?) on any of its {len(result.pages)} pages: run OCR on it first"
            )
        raise EmptyDocument("no text in the file")
    if not result.title:
        result.title = _first_line_title(result) or path.stem
    return result


def _first_line_title(result: ReadResult) -> str:
    if result.format in ("pdf", "docx"):
        return ""  # first lines of PDFs are often running heads; the file name is the safer title
    first = result.pages[0].text.strip().split("\n", 1)[0].strip()
    return first if 3 <= len(first) <= 120 else ""

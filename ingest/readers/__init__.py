"""Readers turn a file into pages of normalized text, picked by content (not by name).

The formats, and the module that reads each, are one table (registry.py); a reader module is
imported only when a file of its format comes, so importing this package loads none of them.
`open_document` gives a stream whose pages can be consumed while later pages are still being
extracted; `read_document` is the same, collected.
"""

from __future__ import annotations

from pathlib import Path

from ingest.readers.registry import (
    DocumentStream,
    Format,
    ReadRequest,
    find_format,
    open_stream,
    reader_modules,
    register_reader,
    supported_extensions,
    supported_formats,
    supported_formats_text,
    unregister_format,
)
from ingest.records import Page, ReadResult

__all__ = [
    "DocumentStream",
    "Format",
    "ReadRequest",
    "finish_result",
    "open_document",
    "read_document",
    "reader_modules",
    "register_reader",
    "supported_extensions",
    "supported_formats",
    "supported_formats_text",
    "unregister_format",
]


def open_document(
    path: Path, password: str | None = None, data: bytes | None = None, ocr: bool = True
) -> DocumentStream:
    """Read `data`, the bytes of the file `path` (read from it when not given): the caller that
    hashed those bytes knows the text comes from exactly them. `ocr`: whether pages without a
    text layer are read by OCR (the formats whose table line says `ocr`)."""
    from ingest.readers.sniff import detect_format  # sniff asks the table in registry.py, which this package holds

    data = path.read_bytes() if data is None else data
    return open_stream(ReadRequest(path, data, detect_format(path, data), password, ocr))


def finish_result(stream: DocumentStream, pages: list[Page], path: Path) -> ReadResult:
    """The ReadResult of a fully consumed stream; refuses documents with no text at all, in the
    reader's words (a PDF without a text layer, an image OCR found nothing on)."""
    if not any(page.text.strip() for page in pages):
        raise stream.no_text_error()
    title = stream.title or _first_line_title(stream.format, pages) or path.stem
    return ReadResult(stream.format, pages, title, stream.synthetic_pages, list(stream.warnings))


def read_document(path: Path, password: str | None = None, ocr: bool = True) -> ReadResult:
    stream = open_document(path, password, ocr=ocr)
    return finish_result(stream, list(stream.pages()), path)


def _first_line_title(fmt: str, pages: list[Page]) -> str:
    # First lines of PDFs are often running heads, of sheets "Sheet: ..." or a header row: the
    # table says which formats' first lines may be titles; for the others the reader found what
    # title there is, else the file name is the safer title.
    declared = find_format(fmt)
    if declared is None or not declared.first_line_title:
        return ""
    first = pages[0].text.strip().split("\n", 1)[0].strip()
    return first if 3 <= len(first) <= 120 else ""

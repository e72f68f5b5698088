"""Decide a file's format from its bytes; the extension only has to agree."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from .errors import DamagedDocument, EmptyDocument, UnsupportedFormat

TEXT_EXTENSIONS = {".txt", ".text", ".md", ".markdown", ".rst", ".log", ".csv"}
HTML_EXTENSIONS = {".html", ".htm", ".xhtml"}
CLAIMED = {".pdf": "pdf", ".docx": "docx"} | {e: "html" for e in HTML_EXTENSIONS} | {e: "text" for e in TEXT_EXTENSIONS}
_HTML_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<?xml")


def _looks_like_html(head: bytes) -> bool:
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return start.startswith(_HTML_MARKERS) and (b"<html" in head.lower() or b"<body" in head.lower())


def content_format(data: bytes) -> str:
    """The format the bytes say: pdf, docx, html, text, or a description of what it is."""
    head = data[:8192]
    if b"%PDF-" in head[:1024]:  # the spec allows junk before the header
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                names = set(archive.namelist())
        except zipfile.BadZipFile as exc:
            raise DamagedDocument(f"damaged ZIP container: {exc}") from exc
        if "word/document.xml" in names:
            return "docx"
        return "zip"
    if _looks_like_html(head):
        return "html"
    return "text"


_DESCRIBE = {"pdf": "a PDF", "docx": "a Word document", "html": "HTML", "text": "plain text"}


def is_supported_name(path: Path) -> bool:
    """Whether a folder scan should pick this file up."""
    return path.suffix.lower() in CLAIMED and not path.name.startswith((".", "~$"))


def detect_format(path: Path, data: bytes) -> str:
    """Return the reader to use for the file `path` whose bytes are `data`, or raise with a
    reason a user understands."""
    if not data:
        raise EmptyDocument("empty file (0 bytes)")
    suffix = path.suffix.lower()
    found = content_format(data)
    if found == "zip":
        raise UnsupportedFormat("a ZIP archive but not a Word document (no word/document.xml inside)")
    claimed = CLAIMED.get(suffix)
    if claimed is None:
        if suffix and found == "text":
            raise UnsupportedFormat(
                f"unsupported file type {suffix}: DocDesk reads PDF, DOCX, HTML, Markdown and plain text"
            )
        return found
    if claimed == found or {claimed, found} <= {"text", "html"}:
        return claimed
    if claimed == "docx":
        raise UnsupportedFormat(f"named {suffix} but not a Word document (not a ZIP container)")
    if claimed == "pdf" and found == "text":
        raise UnsupportedFormat("named .pdf but not a PDF (no %PDF- header)")
    raise UnsupportedFormat(f"named {suffix} but the content is {_DESCRIBE[found]}, not {_DESCRIBE[claimed]}")

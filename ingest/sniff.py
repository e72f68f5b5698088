"""Decide a file's format from its bytes; the extension only has to agree."""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path

from .errors import DamagedDocument, EmptyDocument, EncryptedDocument, UnsupportedFormat

TEXT_EXTENSIONS = {".txt", ".text", ".md", ".markdown", ".rst", ".log"}
HTML_EXTENSIONS = {".html", ".htm", ".xhtml"}
IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp"}
CLAIMED = (
    {".pdf": "pdf", ".docx": "docx", ".pptx": "pptx", ".xlsx": "xlsx", ".csv": "csv", ".tsv": "csv"}
    | {".epub": "epub", ".odt": "odt", ".ods": "ods", ".odp": "odp"}
    | {e: "html" for e in HTML_EXTENSIONS}
    | {e: "text" for e in TEXT_EXTENSIONS}
    | {e: "image" for e in IMAGE_EXTENSIONS}
)
# Old binary Office files: picked up by a folder scan so that they fail with the reason.
LEGACY_OFFICE = {".doc": ".docx", ".xls": ".xlsx", ".ppt": ".pptx"}
ZIP_FORMATS = {"docx", "pptx", "xlsx", "epub", "odt", "ods", "odp"}
READS = (
    "PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), CSV, EPUB, OpenDocument, HTML, Markdown, "
    "plain text and images"
)

_HTML_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<?xml")
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # the compound file of .doc/.xls/.ppt and of encrypted OOXML
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*")
# The part that makes a ZIP an Office Open XML file, and the `mimetype` member of EPUB and ODF.
_OOXML_PARTS = {"word/document.xml": "docx", "ppt/presentation.xml": "pptx", "xl/workbook.xml": "xlsx"}
_MIMETYPES = {
    b"application/epub+zip": "epub",
    b"application/vnd.oasis.opendocument.text": "odt",
    b"application/vnd.oasis.opendocument.spreadsheet": "ods",
    b"application/vnd.oasis.opendocument.presentation": "odp",
}


def _looks_like_html(head: bytes) -> bool:
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return start.startswith(_HTML_MARKERS) and (b"<html" in head.lower() or b"<body" in head.lower())


def _is_image(head: bytes) -> bool:
    return head.startswith(_IMAGE_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


def _zip_format(data: bytes) -> str:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            mimetype = b""
            if "mimetype" in names:
                with archive.open("mimetype") as member:  # read a few bytes: a bomb stays packed
                    mimetype = member.read(100).strip()
    except (zipfile.BadZipFile, zlib.error, RuntimeError, OSError, EOFError, NotImplementedError, ValueError) as exc:
        raise DamagedDocument(f"damaged ZIP container: {exc}") from exc
    if mimetype in _MIMETYPES:
        return _MIMETYPES[mimetype]
    for part, fmt in _OOXML_PARTS.items():
        if part in names:
            return fmt
    return "zip"


def content_format(data: bytes) -> str:
    """The format the bytes say: pdf, docx, pptx, xlsx, epub, odt, ods, odp, image, html, text;
    "zip" for another ZIP archive, "ole" for an old binary Office (or encrypted Office) file."""
    head = data[:8192]
    if b"%PDF-" in head[:1024]:  # the spec allows junk before the header
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        return _zip_format(data)
    if head.startswith(_OLE):
        return "ole"
    if _is_image(head):
        return "image"
    if _looks_like_html(head):
        return "html"
    return "text"


_DESCRIBE = {
    "pdf": "a PDF",
    "docx": "a Word document",
    "pptx": "a PowerPoint presentation",
    "xlsx": "an Excel workbook",
    "csv": "CSV",
    "epub": "an EPUB book",
    "odt": "an OpenDocument text",
    "ods": "an OpenDocument spreadsheet",
    "odp": "an OpenDocument presentation",
    "image": "an image",
    "html": "HTML",
    "text": "plain text",
    "zip": "a ZIP archive",
    "ole": "a binary Office file",
}
_MAIN_PART = {fmt: part for part, fmt in _OOXML_PARTS.items()} | {
    fmt: f"mimetype {mime.decode()}" for mime, fmt in _MIMETYPES.items()
}


def is_supported_name(path: Path) -> bool:
    """Whether a folder scan should pick this file up."""
    suffix = path.suffix.lower()
    return (suffix in CLAIMED or suffix in LEGACY_OFFICE) and not path.name.startswith((".", "~$"))


def _encrypted_office(data: bytes) -> bool:
    """A password-protected .docx/.xlsx/.pptx is an OLE file holding an "EncryptedPackage" stream."""
    return "EncryptedPackage".encode("utf-16-le") in data[: 1 << 20]


def _refuse_ole(suffix: str, data: bytes) -> None:
    if _encrypted_office(data):
        raise EncryptedDocument(
            "the Office file is password-protected: DocDesk cannot open encrypted Office files; "
            "save a copy without a password"
        )
    if suffix in LEGACY_OFFICE:
        raise UnsupportedFormat(
            f"legacy binary Office format ({suffix}): save it as {LEGACY_OFFICE[suffix]} (File > Save As) "
            "and add that file"
        )
    named = f" (named {suffix})" if suffix else ""
    raise UnsupportedFormat(f"legacy binary Office format{named}: save it as .xlsx/.pptx/.docx and add that file")


def _mismatch(suffix: str, claimed: str, found: str) -> UnsupportedFormat:
    if claimed in ZIP_FORMATS and found == "zip":
        if claimed == "docx":
            return UnsupportedFormat("a ZIP archive but not a Word document (no word/document.xml inside)")
        return UnsupportedFormat(
            f"named {suffix} but not {_DESCRIBE[claimed]}: a ZIP archive without {_MAIN_PART[claimed]}"
        )
    if claimed in ZIP_FORMATS and found not in ZIP_FORMATS:
        return UnsupportedFormat(f"named {suffix} but not {_DESCRIBE[claimed]} (not a ZIP container)")
    if claimed == "pdf" and found == "text":
        return UnsupportedFormat("named .pdf but not a PDF (no %PDF- header)")
    if claimed == "image" and found == "text":
        return UnsupportedFormat(f"named {suffix} but not an image (no PNG, JPEG, TIFF or WebP signature)")
    return UnsupportedFormat(f"named {suffix} but the content is {_DESCRIBE[found]}, not {_DESCRIBE[claimed]}")


def detect_format(path: Path, data: bytes) -> str:
    """Return the reader to use for the file `path` whose bytes are `data`, or raise with a
    reason a user understands."""
    if not data:
        raise EmptyDocument("empty file (0 bytes)")
    suffix = path.suffix.lower()
    found = content_format(data)
    claimed = CLAIMED.get(suffix)
    if found == "ole" and (not suffix or suffix in LEGACY_OFFICE or claimed in ZIP_FORMATS):
        _refuse_ole(suffix, data)
    if claimed is None:
        if found == "zip":
            raise UnsupportedFormat(
                "a ZIP archive but not a document DocDesk reads "
                "(no word/document.xml, ppt/presentation.xml or xl/workbook.xml inside)"
            )
        if suffix and found in ("text", "ole"):
            raise UnsupportedFormat(f"unsupported file type {suffix}: DocDesk reads {READS}")
        return found
    if claimed == found or {claimed, found} <= {"text", "html"} or (claimed, found) == ("csv", "text"):
        return claimed
    raise _mismatch(suffix, claimed, found)

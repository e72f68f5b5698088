"""Plain text and Markdown: encoding detection, then synthetic pages."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from ..errors import EmptyDocument, UnsupportedFormat
from ..normalize import normalize_text
from ..records import Page, ReadResult

# Formats without pages are cut into synthetic pages of about this many characters,
# at paragraph ends, so citations still point somewhere a person can find.
SYNTHETIC_PAGE_CHARS = 3000

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# charset-normalizer names the narrower Chinese code pages; GB18030 decodes all of them.
_WIDEN = {"gb2312": "gb18030", "gbk": "gb18030", "cp936": "gb18030", "ascii": "utf-8", "latin_1": "cp1252"}


def _utf16_without_bom(data: bytes) -> str | None:
    sample = data[:4096]
    if len(sample) < 4:
        return None
    even_nuls = sample[0::2].count(0) / (len(sample) / 2)
    odd_nuls = sample[1::2].count(0) / (len(sample) / 2)
    if odd_nuls > 0.3 and even_nuls < 0.05:
        return "utf-16-le"
    if even_nuls > 0.3 and odd_nuls < 0.05:
        return "utf-16-be"
    return None


def detect_encoding(data: bytes) -> str:
    """BOM, then UTF-16 by NUL pattern, then strict UTF-8, then charset-normalizer."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    utf16 = _utf16_without_bom(data)
    if utf16:
        return utf16
    if b"\x00" in data:
        raise UnsupportedFormat("binary content (NUL bytes): not a text file")
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise UnsupportedFormat("binary content: no text encoding fits (not a text file)")
    return _WIDEN.get(best.encoding, best.encoding)


def decode_bytes(data: bytes) -> tuple[str, str]:
    encoding = detect_encoding(data)
    return data.decode(encoding, errors="replace"), encoding


def paginate(text: str, page_chars: int = SYNTHETIC_PAGE_CHARS) -> list[Page]:
    """Cut text into synthetic pages at paragraph ends, about `page_chars` long."""
    paragraphs = re.split(r"(?<=\n)\n+", text)
    pages: list[Page] = []
    current = ""
    for paragraph in paragraphs:
        if current and len(current) + len(paragraph) > page_chars:
            pages.append(Page(len(pages) + 1, current.strip()))
            current = ""
        current += paragraph + "\n"
    if current.strip() or not pages:
        pages.append(Page(len(pages) + 1, current.strip()))
    return pages


def _markdown_title(text: str) -> str:
    for line in text.splitlines()[:40]:
        match = re.match(r"#\s+(.+)", line.strip())
        if match:
            return match.group(1).strip()
    return ""


def text_to_result(text: str, fmt: str, title: str = "", warnings: list[str] | None = None) -> ReadResult:
    text = normalize_text(text)
    if not text:
        raise EmptyDocument("no text in the file")
    return ReadResult(fmt, paginate(text), title=title, synthetic_pages=True, warnings=warnings or [])


def read_text(path: Path) -> ReadResult:
    data = path.read_bytes()
    text, encoding = decode_bytes(data)
    fmt = "markdown" if path.suffix.lower() in (".md", ".markdown") else "text"
    title = _markdown_title(text) if fmt == "markdown" else ""
    warnings = [] if encoding in ("utf-8", "utf-8-sig") else [f"decoded as {encoding}"]
    return text_to_result(text, fmt, title, warnings)

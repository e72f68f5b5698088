"""Plain text and Markdown: encoding detection, then synthetic pages."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
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


# Bytes that plain text does not hold: C0 controls but tab, line breaks, form feed and
# ESC (coloured logs), and DEL. NUL is counted apart.
_CONTROL_BYTES = bytes(range(1, 9)) + bytes(range(0x0E, 0x1B)) + bytes(range(0x1C, 0x20)) + b"\x7f"
_MAX_NUL_SHARE = 1000  # more than one NUL in this many bytes: binary
_MAX_CONTROL_SHARE = 20  # more than one control byte in this many: binary
_MAX_BAD_UTF8_SHARE = 100  # a UTF-8 file may lose at most one byte in this many to damage
# Damaged UTF-8 keeps at least this many valid multi-byte characters per invalid sequence;
# GB18030 or Latin-1 read as UTF-8 fail far more often.
_MIN_GOOD_PER_BAD = 20
_UTF8_REPLACEMENT = "\ufffd".encode()


@dataclass
class Decoded:
    text: str
    encoding: str
    warnings: list[str] = field(default_factory=list)


def _refuse_binary(data: bytes) -> None:
    if data.count(0) > len(data) // _MAX_NUL_SHARE:
        raise UnsupportedFormat("binary content (NUL bytes): not a text file")
    controls = len(data) - len(data.translate(None, _CONTROL_BYTES))
    if controls > len(data) // _MAX_CONTROL_SHARE:
        raise UnsupportedFormat(f"binary content ({controls} control bytes in {len(data)}): not a text file")


def _bad_utf8(data: bytes) -> tuple[int, int]:
    """(invalid sequences, valid non-ASCII characters) when `data` is read as UTF-8."""
    text = data.decode("utf-8", errors="replace")
    genuine = data.count(_UTF8_REPLACEMENT)  # U+FFFD written on purpose is not damage
    bad = text.count("\ufffd") - genuine
    non_ascii = len(text) - len(text.encode("ascii", "ignore")) - bad - genuine
    return bad, non_ascii


def detect_encoding(data: bytes) -> str:
    """BOM, then UTF-16 by NUL pattern, then UTF-8 (strict, or with a few damaged bytes
    among many valid multi-byte characters), then charset-normalizer, then UTF-8 again for
    text that only a few damaged bytes keep from being UTF-8."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    utf16 = _utf16_without_bom(data)
    if utf16:
        return utf16
    _refuse_binary(data)
    try:
        data.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError:
        pass
    bad, non_ascii = _bad_utf8(data)
    if bad * _MIN_GOOD_PER_BAD <= non_ascii:
        return "utf-8"
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is not None:
        return _WIDEN.get(best.encoding, best.encoding)
    if bad * _MAX_BAD_UTF8_SHARE <= len(data):
        return "utf-8"
    raise UnsupportedFormat("binary content: no text encoding fits (not a text file)")


def decode(data: bytes) -> Decoded:
    """The text of `data`, its encoding, and warnings: the encoding if not UTF-8, and how
    many damaged bytes were replaced (by U+FFFD)."""
    encoding = detect_encoding(data)
    text = data.decode(encoding, errors="replace")
    warnings = [] if encoding in ("utf-8", "utf-8-sig") else [f"decoded as {encoding}"]
    replaced = text.count("\ufffd") - (data.count(_UTF8_REPLACEMENT) if encoding.startswith("utf-8") else 0)
    if replaced > 0:
        warnings.append(f"{replaced} invalid byte sequence(s) replaced by U+FFFD (damaged {encoding} text?)")
    return Decoded(text, encoding, warnings)


def decode_bytes(data: bytes) -> tuple[str, str]:
    decoded = decode(data)
    return decoded.text, decoded.encoding


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


def read_text(path: Path, data: bytes | None = None) -> ReadResult:
    decoded = decode(path.read_bytes() if data is None else data)
    fmt = "markdown" if path.suffix.lower() in (".md", ".markdown") else "text"
    title = _markdown_title(decoded.text) if fmt == "markdown" else ""
    return text_to_result(decoded.text, fmt, title, decoded.warnings)

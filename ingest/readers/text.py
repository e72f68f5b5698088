"""Plain text and Markdown: encoding detection, then synthetic pages."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ingest.chunking import MAX_DOCUMENT_CHARS
from ingest.errors import EmptyDocument, IngestError, UnsupportedFormat
from ingest.normalize import normalize_text
from ingest.readers.registry import ReadRequest, register_reader
from ingest.records import Page, ReadResult

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


SLICE_BYTES = 1 << 20  # bytes are scanned and decoded this many at a time


def _slices(data: bytes, size: int = 0) -> Iterator[memoryview]:
    size = size or SLICE_BYTES
    view = memoryview(data)
    for start in range(0, len(data), size):
        yield view[start : start + size]


def _refuse_binary(data: bytes) -> None:
    nuls = controls = 0
    for piece in _slices(data):  # in slices: a 200 MB file must not be copied whole
        raw = bytes(piece)
        nuls += raw.count(0)
        controls += len(raw) - len(raw.translate(None, _CONTROL_BYTES))
    if nuls > len(data) // _MAX_NUL_SHARE:
        raise UnsupportedFormat("binary content (NUL bytes): not a text file")
    if controls > len(data) // _MAX_CONTROL_SHARE:
        raise UnsupportedFormat(f"binary content ({controls} control bytes in {len(data)}): not a text file")


def _bad_utf8(data: bytes) -> tuple[int, int]:
    """(invalid sequences, valid non-ASCII characters) when `data` is read as UTF-8."""
    bad = non_ascii = 0
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for piece in _slices(data):
        text = decoder.decode(piece)
        replaced = text.count("\ufffd")
        bad += replaced
        non_ascii += len(text) - len(text.encode("ascii", "ignore")) - replaced
    text = decoder.decode(b"", final=True)
    bad += text.count("\ufffd")
    genuine = data.count(_UTF8_REPLACEMENT)  # U+FFFD written on purpose is not damage
    return bad - genuine, non_ascii - genuine


def _is_utf8(data: bytes) -> bool:
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for piece in _slices(data):
            decoder.decode(piece)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


# charset-normalizer samples the bytes anyway; giving it at most this many keeps it fast.
_DETECTION_SAMPLE = 8 << 20


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
    if _is_utf8(data):
        return "utf-8"
    bad, non_ascii = _bad_utf8(data)
    if bad * _MIN_GOOD_PER_BAD <= non_ascii:
        return "utf-8"
    from charset_normalizer import from_bytes

    best = from_bytes(data[:_DETECTION_SAMPLE]).best()
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


class Paginator:
    """Cuts text, fed in pieces that end at paragraph ends, into synthetic pages of about
    `page_chars` characters at paragraph ends."""

    def __init__(self, page_chars: int = SYNTHETIC_PAGE_CHARS) -> None:
        self.page_chars = page_chars
        self.count = 0
        self._current: list[str] = []
        self._length = 0

    def _page(self) -> Page:
        self.count += 1
        text = "".join(self._current).strip()
        self._current, self._length = [], 0
        return Page(self.count, text)

    def feed(self, text: str) -> Iterator[Page]:
        for paragraph in re.split(r"(?<=\n)\n+", text):
            if self._current and self._length + len(paragraph) > self.page_chars:
                yield self._page()
            self._current.append(paragraph + "\n")
            self._length += len(paragraph) + 1

    def finish(self) -> Iterator[Page]:
        if "".join(self._current).strip() or not self.count:
            yield self._page()


def paginate(text: str, page_chars: int = SYNTHETIC_PAGE_CHARS) -> list[Page]:
    """Cut text into synthetic pages at paragraph ends, about `page_chars` long."""
    paginator = Paginator(page_chars)
    return [*paginator.feed(text), *paginator.finish()]


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


# A text file is decoded, repaired and paged this many characters at a time, cut at a
# paragraph end where one is near, so memory stays a small multiple of the file, not ten.
PIECE_CHARS = 1 << 20
_PARAGRAPH_END = re.compile(r"\n[^\S\n]*\n")
_ENDS_PARAGRAPH = re.compile(r"\n[^\S\n]*\n\s*\Z")


def _cut(buffer: str) -> int:
    """Where to end the next piece of `buffer`: its last paragraph end, else its last line end,
    else its last space, else anywhere (a file that is one endless word)."""
    ends = [m.end() for m in _PARAGRAPH_END.finditer(buffer, len(buffer) // 2)]
    if ends:
        return ends[-1]
    for mark in ("\n", " "):
        at = buffer.rfind(mark, len(buffer) // 2)
        if at > 0:
            return at + 1
    return len(buffer)


class TextStream:
    """A text file's pages as they are decoded, piece by piece; decoding stops once the
    chunker's limit for one document is passed (the chunker warns about the cut)."""

    synthetic_pages = True

    def __init__(self, data: bytes, fmt: str, max_chars: int = MAX_DOCUMENT_CHARS) -> None:
        self.format = fmt
        self.title = ""
        self._data = data
        self._max_chars = max_chars
        self.encoding = detect_encoding(data)
        self._warnings = [] if self.encoding in ("utf-8", "utf-8-sig") else [f"decoded as {self.encoding}"]
        self._replaced = 0
        self._done = False

    @property
    def warnings(self) -> list[str]:
        if not self._done or self._replaced <= 0:
            return list(self._warnings)
        damage = f"{self._replaced} invalid byte sequence(s) replaced by U+FFFD (damaged {self.encoding} text?)"
        return [*self._warnings, damage]

    def _pieces(self) -> Iterator[tuple[str, bool]]:
        """Decoded text in pieces, each with whether it ends a paragraph."""
        decoder = codecs.getincrementaldecoder(self.encoding)(errors="replace")
        genuine = self.encoding.startswith("utf-8")
        buffer = ""
        for piece in _slices(self._data):
            raw = bytes(piece)
            text = decoder.decode(raw)
            if genuine:  # U+FFFD written on purpose is not damage
                self._replaced -= raw.count(_UTF8_REPLACEMENT)
            buffer += text
            if len(buffer) >= PIECE_CHARS:
                # keep a trailing CR back: its LF may start the next slice
                end = _cut(buffer[:-1] if buffer.endswith("\r") else buffer)
                piece, buffer = buffer[:end], buffer[end:]
                yield piece, _ENDS_PARAGRAPH.search(piece, max(0, end - 256)) is not None
        yield buffer + decoder.decode(b"", final=True), True

    def pages(self) -> Iterator[Page]:
        paginator = Paginator()
        produced = 0
        for raw, ends_paragraph in self._pieces():
            self._replaced += raw.count("\ufffd")
            text = normalize_text(raw)
            if self.format == "markdown" and not self.title and not paginator.count:
                self.title = _markdown_title(text)
            if text:
                # The paginator ends every paragraph it is fed with one line break: a second one
                # when the piece ended a paragraph, none when it was cut inside one.
                yield from paginator.feed(text + "\n" if ends_paragraph else text)
                produced += len(text)
            if produced > self._max_chars:
                break  # past what the chunker keeps: reading on costs memory for nothing
        self._done = True
        if produced:
            yield from paginator.finish()

    def no_text_error(self) -> IngestError:
        return EmptyDocument("no text in the file")


@register_reader("text", "markdown")
def open_text(request: ReadRequest) -> TextStream:
    # The limit is read here, not bound as a default: a test may lower it.
    return TextStream(request.data, request.format, max_chars=MAX_DOCUMENT_CHARS)


def read_text(path: Path, data: bytes | None = None) -> ReadResult:
    """The whole text file at once (for callers that want a ReadResult)."""
    fmt = "markdown" if path.suffix.lower() in (".md", ".markdown") else "text"
    stream = TextStream(path.read_bytes() if data is None else data, fmt)
    pages = list(stream.pages())
    if not pages:
        raise EmptyDocument("no text in the file")
    return ReadResult(fmt, pages, title=stream.title, synthetic_pages=True, warnings=stream.warnings)

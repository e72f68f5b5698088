"""The one table of the formats DocDesk reads, and how a reader module registers for its format.

Each format is declared once, in FORMATS below: its name (ReadResult.format), the label users
see, its extensions, how its bytes are recognised (`Sniff`: ingest/readers/sniff.py asks the table), the
module that reads it, and what it can do (OCR, real or synthetic pages, a first line that may be
the title). The module is imported only when a file of that format comes, so `import
ingest.readers` loads none of them; on import it registers its reader:

    @register_reader("docx")
    def open_docx(request: ReadRequest) -> ReadResult | DocumentStream: ...

Adding a format is one module and one line here. A format from outside the table (a test's, a
plugin's) is declared where it is read, in one module: `@register_reader(Format(...))`.
"""

from __future__ import annotations

import importlib
import io
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from ingest.errors import DamagedDocument, EmptyDocument, IngestError
from ingest.records import Page, ReadResult

HEAD_BYTES = 8192  # sniffs look at this much of a file, and into a ZIP's directory
FALLBACK = "text"  # content no sniff claims is read as plain text (when its name does not say otherwise)
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, RuntimeError, OSError, EOFError, NotImplementedError, ValueError)


class Content:
    """A file's bytes as the sniffs see them: the head, and a ZIP's member names and `mimetype`
    member, read once whichever format asks first."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.head = data[:HEAD_BYTES]
        self.is_zip = self.head.startswith(b"PK\x03\x04")

    @cached_property
    def zip(self) -> tuple[frozenset[str], bytes]:
        """(member names, the first bytes of the `mimetype` member); raises DamagedDocument."""
        try:
            with zipfile.ZipFile(io.BytesIO(self.data)) as archive:
                names = frozenset(archive.namelist())
                mimetype = b""
                if "mimetype" in names:
                    with archive.open("mimetype") as member:  # a few bytes: a bomb stays packed
                        mimetype = member.read(100).strip()
        except _ZIP_ERRORS as exc:
            raise DamagedDocument(f"damaged ZIP container: {exc}") from exc
        return names, mimetype


@dataclass(frozen=True)
class Sniff:
    """How a format's bytes are recognised. Sniffs are tried by `rank` (magic bytes, then a ZIP's
    mimetype member, then its member names, then markup), in table order within a rank."""

    test: Callable[[Content], bool]
    missing: str = ""  # what a file named as this format lacks when it is not one: "%PDF- header"
    in_zip: bool = False  # the format is a ZIP container
    rank: int = 0


def magic(*signatures: bytes, within: int = 0, missing: str = "") -> Sniff:
    """The file starts with one of `signatures` (or holds one in its first `within` bytes)."""
    if within:
        return Sniff(lambda c: any(s in c.head[:within] for s in signatures), missing)
    return Sniff(lambda c: c.head.startswith(signatures), missing)


def zip_mimetype(mimetype: bytes) -> Sniff:
    """A ZIP whose `mimetype` member says `mimetype` (EPUB, OpenDocument)."""
    return Sniff(lambda c: c.is_zip and c.zip[1] == mimetype, f"mimetype {mimetype.decode()}", True, 1)


def zip_part(name: str) -> Sniff:
    """A ZIP holding the member `name` (Office Open XML's main part)."""
    return Sniff(lambda c: c.is_zip and name in c.zip[0], name, True, 2)


_HTML_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<?xml")


def _looks_like_html(content: Content) -> bool:
    start = content.head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return start.startswith(_HTML_MARKERS) and (b"<html" in start or b"<body" in start)


def _is_image(content: Content) -> bool:
    head = content.head
    is_webp = head[:4] == b"RIFF" and head[8:12] == b"WEBP"
    return is_webp or head.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*"))


@dataclass(frozen=True)
class Format:
    name: str  # ReadResult.format, and the key its reader registers under: "docx"
    label: str  # what users see in lists: "Word"
    extensions: tuple[str, ...]  # names a folder scan picks up and that claim this format: (".docx",)
    module: str = ""  # the module that registers its reader, imported when such a file comes
    sniff: Sniff | None = None  # how its bytes say what they are; None: text, known by its name
    noun: str = ""  # in messages: "named .xlsx but the content is a Word document"
    group: str = ""  # its word in the one-line summary when several formats share it: "OpenDocument"
    holds: tuple[str, ...] = ()  # what else sniffing may find in such a file that is read as this format
    pages: Literal["real", "synthetic", "either"] = "real"  # its own pages, ~3,000-character ones, or per file
    ocr: bool = False  # reads images of text by OCR
    first_line_title: bool = False  # a short first line of its text may serve as the title
    replaces: tuple[str, ...] = ()  # old binary extensions refused with "save it as <extensions[0]>"


FORMATS: tuple[Format, ...] = (
    Format("pdf", "PDF", (".pdf",), "ingest.readers.pdf", magic(b"%PDF-", within=1024, missing="%PDF- header"),
           "a PDF", ocr=True),
    Format("docx", "Word", (".docx",), "ingest.readers.docx", zip_part("word/document.xml"), "a Word document",
           pages="synthetic", replaces=(".doc",)),
    Format("pptx", "PowerPoint", (".pptx",), "ingest.readers.pptx", zip_part("ppt/presentation.xml"),
           "a PowerPoint presentation", replaces=(".ppt",)),
    Format("xlsx", "Excel", (".xlsx",), "ingest.readers.xlsx", zip_part("xl/workbook.xml"), "an Excel workbook",
           pages="either", replaces=(".xls",)),
    Format("epub", "EPUB", (".epub",), "ingest.readers.epub", zip_mimetype(b"application/epub+zip"),
           "an EPUB book", pages="either"),
    Format("odt", "OpenDocument text", (".odt",), "ingest.readers.odf",
           zip_mimetype(b"application/vnd.oasis.opendocument.text"), "an OpenDocument text", "OpenDocument",
           pages="either", first_line_title=True),
    Format("ods", "OpenDocument spreadsheet", (".ods",), "ingest.readers.odf",
           zip_mimetype(b"application/vnd.oasis.opendocument.spreadsheet"), "an OpenDocument spreadsheet",
           "OpenDocument", pages="either"),
    Format("odp", "OpenDocument presentation", (".odp",), "ingest.readers.odf",
           zip_mimetype(b"application/vnd.oasis.opendocument.presentation"), "an OpenDocument presentation",
           "OpenDocument"),
    Format("html", "HTML", (".html", ".htm", ".xhtml"), "ingest.readers.html",
           Sniff(_looks_like_html, "HTML markup", rank=3), "HTML", holds=("text",), pages="synthetic",
           first_line_title=True),
    Format("markdown", "Markdown", (".md", ".markdown"), "ingest.readers.text", None, "Markdown",
           holds=("text", "html"), pages="synthetic", first_line_title=True),
    Format("csv", "CSV", (".csv", ".tsv"), "ingest.readers.csv_table", None, "CSV", holds=("text",),
           pages="either"),
    Format("text", "text", (".txt", ".text", ".rst", ".log"), "ingest.readers.text", None, "plain text",
           holds=("html",), pages="synthetic", first_line_title=True),
    Format("image", "image", (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp"), "ingest.readers.image",
           Sniff(_is_image, "PNG, JPEG, TIFF or WebP signature"), "an image", "images", ocr=True),
)  # fmt: skip


# ---------------------------------------------------------------- what readers give


@dataclass(frozen=True)
class ReadRequest:
    """What a reader is asked to read: the file's path (for its name), its bytes, and the format
    the table found for them."""

    path: Path
    data: bytes
    format: str
    password: str | None = None  # a PDF's, when the user gave one
    ocr: bool = True  # pages without a text layer (scans, photos) are read by OCR


@runtime_checkable
class DocumentStream(Protocol):
    """What every reader gives: pages that may be extracted as they are consumed (a caller may
    stop between two pages and drop the stream), then warnings, and, when no page had text, the
    reason in the format's own words."""

    format: str
    title: str
    synthetic_pages: bool

    def pages(self) -> Iterator[Page]: ...

    @property
    def warnings(self) -> list[str]: ...  # complete once pages() is exhausted

    def no_text_error(self) -> IngestError: ...


class WholeDocument:
    """A format read in one go (HTML, Office files, EPUB, ODF are fast) behind the stream interface."""

    def __init__(self, result: ReadResult) -> None:
        self._result = result
        self.format = result.format
        self.title = result.title
        self.synthetic_pages = result.synthetic_pages
        self.warnings = result.warnings

    def pages(self) -> Iterator[Page]:
        yield from self._result.pages

    def no_text_error(self) -> IngestError:
        return EmptyDocument("no text in the file")


Reader = Callable[[ReadRequest], "DocumentStream | ReadResult"]

# ---------------------------------------------------------------- the table, live

_TABLE: dict[str, Format] = {}
_READERS: dict[str, Reader] = {}
_BY_EXTENSION: dict[str, str] = {}


def declare_format(fmt: Format) -> Format:
    """Add a line to the table (FORMATS goes in at import; a format from outside it through
    `register_reader(Format(...))`)."""
    if not fmt.module:
        raise ValueError(f"format {fmt.name!r} names no module to read it")
    fmt = replace(fmt, noun=fmt.noun or fmt.label, group=fmt.group or fmt.label)
    if fmt.name in _TABLE and _TABLE[fmt.name].module != fmt.module:  # the same module again: a reload
        raise ValueError(f"format {fmt.name!r} is declared by {_TABLE[fmt.name].module} already")
    for extension in fmt.extensions:
        if extension != extension.lower() or not extension.startswith("."):
            raise ValueError(f"format {fmt.name!r}: extensions are written '.ext' in lower case, not {extension!r}")
        owner = _BY_EXTENSION.get(extension, fmt.name)
        if owner != fmt.name:
            raise ValueError(f"format {fmt.name!r} claims {extension}, which is {owner!r}'s")
    _TABLE[fmt.name] = fmt
    _BY_EXTENSION.update(dict.fromkeys(fmt.extensions, fmt.name))
    return fmt


for _fmt in FORMATS:
    declare_format(_fmt)


def register_reader(*formats: str | Format) -> Callable[[Reader], Reader]:
    """Decorator for the function that reads `formats` (names in the table, or `Format`s declared
    here, whose module is then the function's own): it takes a ReadRequest and returns a
    DocumentStream, or a ReadResult when the whole file is read at once."""

    def register(reader: Reader) -> Reader:
        for item in formats:
            if isinstance(item, Format):
                item = declare_format(item if item.module else replace(item, module=reader.__module__)).name
            if item not in _TABLE:
                raise ValueError(f"format {item!r} is not in the table (ingest/readers/registry.py)")
            known = _READERS.get(item)
            if known is not None and (known.__module__, known.__qualname__) != (reader.__module__, reader.__qualname__):
                raise ValueError(f"format {item!r} is read by {known.__module__} already")
            _READERS[item] = reader
        return reader

    return register


def unregister_format(name: str) -> None:
    """Take a format declared from outside FORMATS out of the table again (tests, plugins)."""
    if any(fmt.name == name for fmt in FORMATS):
        raise ValueError(f"format {name!r} is built in")
    fmt = _TABLE.pop(name, None)
    _READERS.pop(name, None)
    for extension in fmt.extensions if fmt else ():
        _BY_EXTENSION.pop(extension, None)


def reader_for(name: str) -> Reader:
    """The reader of the format `name`, importing the one module that registers it."""
    if name not in _READERS:
        importlib.import_module(format_named(name).module)
    reader = _READERS.get(name)
    if reader is None:
        raise LookupError(f"{format_named(name).module} registers no reader for format {name!r}")
    return reader


def open_stream(request: ReadRequest) -> DocumentStream:
    result = reader_for(request.format)(request)
    return WholeDocument(result) if isinstance(result, ReadResult) else result


# ---------------------------------------------------------------- lookups and lists


def formats() -> tuple[Format, ...]:
    """Every format in the table, in its order."""
    return tuple(_TABLE.values())


def format_named(name: str) -> Format:
    try:
        return _TABLE[name]
    except KeyError:
        raise LookupError(f"no format {name!r} in the table") from None


def find_format(name: str) -> Format | None:
    return _TABLE.get(name)


def format_for_extension(extension: str) -> Format | None:
    """The format a file name ending in `extension` (".docx", any case) claims to be."""
    name = _BY_EXTENSION.get(extension.lower())
    return _TABLE[name] if name else None


def sniffs() -> list[Format]:
    """The formats with a content sniff, in the order they are tried."""
    ordered = [fmt for fmt in _TABLE.values() if fmt.sniff is not None]
    return sorted(ordered, key=lambda fmt: fmt.sniff.rank)


def replaced_extensions() -> dict[str, str]:
    """Old binary extensions and the one to save such a file as: {".doc": ".docx", ...}."""
    return {old: fmt.extensions[0] for fmt in _TABLE.values() for old in fmt.replaces}


def supported_extensions() -> tuple[str, ...]:
    """Every extension DocDesk reads, sorted: for file dialogs and folder scans."""
    return tuple(sorted(_BY_EXTENSION))


def supported_formats() -> tuple[str, ...]:
    """The labels of the formats DocDesk reads, in the table's order: ("PDF", "Word", ...)."""
    return tuple(fmt.label for fmt in _TABLE.values())


def format_groups() -> tuple[str, ...]:
    """The formats as users name them in a sentence, each word once: ("PDF", ..., "text", "images")."""
    return tuple(dict.fromkeys(fmt.group for fmt in _TABLE.values()))


def supported_formats_text() -> str:
    """The formats as one phrase for hints and help: "PDF, Word, ..., CSV, text and images"."""
    words = format_groups()
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def reader_modules() -> tuple[str, ...]:
    """The modules that read the formats of the table, each once: the PyInstaller spec's hidden
    imports (they are imported by name, which its analysis cannot follow)."""
    return tuple(dict.fromkeys(fmt.module for fmt in _TABLE.values()))

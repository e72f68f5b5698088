"""DOCX with python-docx: paragraphs and tables in document order.

python-docx reads a copy of the container whose parts were checked against the input
limits while they were decompressed (zipguard), so a zip bomb is refused, not parsed.
"""

from __future__ import annotations

from pathlib import Path

from ingest.errors import DamagedDocument, IngestError
from ingest.readers.registry import ReadRequest, register_reader
from ingest.readers.text import text_to_result
from ingest.readers.zipguard import checked_copy
from ingest.records import ReadResult

# What python-docx calls a document whose core properties are missing (it makes them up).
_PLACEHOLDER_TITLE = "Word Document"
_TITLE_SEARCH = 50  # paragraphs looked at for a heading to use as the title
_TITLE_CHARS = (3, 120)


@register_reader("docx")
def open_docx(request: ReadRequest) -> ReadResult:
    return read_docx(request.path, request.data)


def read_docx(path: Path, data: bytes | None = None) -> ReadResult:
    try:
        package = checked_copy(path.read_bytes() if data is None else data)
        import docx

        document = docx.Document(package)
        parts, leading = _body_text(document)
        title = _core_title(document) or _heading_or_first_line(leading)
    except IngestError:  # over the input limits, or damaged as zipguard found it
        raise
    except Exception as exc:  # zipfile and python-docx raise KeyError, BadZipFile, lxml errors ...
        raise DamagedDocument(f"damaged Word document: {type(exc).__name__}: {exc}") from exc
    return text_to_result("\n\n".join(p for p in parts if p.strip()), "docx", title)


def _body_text(document) -> tuple[list[str], list]:
    """The body's paragraphs and table rows as text, and its first paragraphs (for a title)."""
    from docx.table import Table

    parts: list[str] = []
    leading: list = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            for row in item.rows:
                cells = [" ".join(cell.text.split()) for cell in row.cells]
                parts.append(" | ".join(dict.fromkeys(c for c in cells if c)))  # merged cells repeat
        else:
            parts.append(item.text)
            if len(leading) < _TITLE_SEARCH and item.text.strip():
                leading.append(item)
    return parts, leading


def _core_title(document) -> str:
    """The title of the core properties, if the file has them: without docProps/core.xml
    python-docx invents properties titled "Word Document"."""
    from docx.opc.constants import RELATIONSHIP_TYPE

    package = document.part.package
    if not any(rel.reltype == RELATIONSHIP_TYPE.CORE_PROPERTIES for rel in package.rels.values()):
        return ""
    title = " ".join((document.core_properties.title or "").split())
    return "" if title == _PLACEHOLDER_TITLE else title


def _heading_or_first_line(paragraphs: list) -> str:
    """The first Title or Heading paragraph, else the first line if it is short enough;
    "" leaves the file name as the title."""
    low, high = _TITLE_CHARS
    for paragraph in paragraphs:
        style = paragraph.style.name if paragraph.style is not None else ""
        text = " ".join(paragraph.text.split())
        if (style == "Title" or style.startswith("Heading")) and low <= len(text) <= high:
            return text
    if paragraphs:
        first = " ".join(paragraphs[0].text.strip().split("\n", 1)[0].split())
        if low <= len(first) <= high:
            return first
    return ""

"""DOCX with python-docx: paragraphs and tables in document order.

python-docx reads a copy of the container whose parts were checked against the input
limits while they were decompressed (zipguard), so a zip bomb is refused, not parsed.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import DamagedDocument, IngestError
from ..records import ReadResult
from .text import text_to_result
from .zipguard import checked_copy


def read_docx(path: Path) -> ReadResult:
    try:
        package = checked_copy(path)
        import docx
        from docx.table import Table

        document = docx.Document(package)
        parts: list[str] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                for row in item.rows:
                    cells = [" ".join(cell.text.split()) for cell in row.cells]
                    parts.append(" | ".join(dict.fromkeys(c for c in cells if c)))  # merged cells repeat
            else:
                parts.append(item.text)
        title = document.core_properties.title or ""
    except IngestError:  # over the input limits, or damaged as zipguard found it
        raise
    except Exception as exc:  # zipfile and python-docx raise KeyError, BadZipFile, lxml errors ...
        raise DamagedDocument(f"damaged Word document: {type(exc).__name__}: {exc}") from exc
    return text_to_result("\n\n".join(p for p in parts if p.strip()), "docx", title.strip())

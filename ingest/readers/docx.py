"""DOCX with python-docx: paragraphs and tables in document order."""

from __future__ import annotations

from pathlib import Path

from ..errors import DamagedDocument
from ..records import ReadResult
from .text import text_to_result


def read_docx(path: Path) -> ReadResult:
    try:
        import docx
        from docx.table import Table

        document = docx.Document(str(path))
        parts: list[str] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                for row in item.rows:
                    cells = [" ".join(cell.text.split()) for cell in row.cells]
                    parts.append(" | ".join(dict.fromkeys(c for c in cells if c)))  # merged cells repeat
            else:
                parts.append(item.text)
        title = document.core_properties.title or ""
    except Exception as exc:  # python-docx raises KeyError, BadZipFile, lxml errors ...
        raise DamagedDocument(f"damaged Word document: {type(exc).__name__}: {exc}") from exc
    return text_to_result("\n\n".join(p for p in parts if p.strip()), "docx", title.strip())

"""PPTX with python-pptx: one page per slide, so "p. 7" is slide 7.

A slide's page holds its title, then the text of its shapes in reading order (top to bottom,
then left to right, into groups), tables as rows, and at the end its speaker notes after a
line "Notes:". A slide without text keeps its (empty) page so the numbers stay right.
python-pptx reads a copy of the container whose parts were checked against the input limits
(zipguard), so a zip bomb is refused, not parsed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ingest.errors import DamagedDocument, IngestError
from ingest.normalize import normalize_text
from ingest.readers.registry import ReadRequest, register_reader
from ingest.readers.sheet_pages import looks_like_header
from ingest.readers.zipguard import POWERPOINT, checked_copy
from ingest.records import Page, ReadResult

# Titles that PowerPoint, python-pptx and templates leave in the core properties of a file
# nobody titled: the first slide's title says more.
_PLACEHOLDER_TITLES = {
    "",
    "powerpoint presentation",
    "presentation",
    "powerpoint-präsentation",
    "présentation powerpoint",
}


@register_reader("pptx")
def open_pptx(request: ReadRequest) -> ReadResult:
    return read_pptx(request.path, request.data)


def read_pptx(path: Path, data: bytes | None = None) -> ReadResult:
    try:
        package = checked_copy(path.read_bytes() if data is None else data, package=POWERPOINT)
        import pptx

        presentation = pptx.Presentation(package)
        pages = [Page(number, normalize_text(slide_text(slide))) for number, slide in enumerate(presentation.slides, 1)]
        title = _core_title(presentation) or _first_slide_title(presentation)
    except IngestError:  # over the input limits, or damaged as zipguard found it
        raise
    except Exception as exc:  # zipfile and python-pptx raise KeyError, BadZipFile, lxml errors ...
        raise DamagedDocument(f"damaged PowerPoint presentation: {type(exc).__name__}: {exc}") from exc
    return ReadResult("pptx", pages, title=title)


def slide_text(slide) -> str:
    title_shape = slide.shapes.title
    parts = [_frame_text(title_shape)] if title_shape is not None and title_shape.has_text_frame else []
    title_id = title_shape.shape_id if title_shape is not None else None
    parts += [
        text for shape in _reading_order(slide.shapes) if shape.shape_id != title_id for text in _shape_texts(shape)
    ]
    if slide.has_notes_slide:
        frame = slide.notes_slide.notes_text_frame
        notes = _text(frame.text) if frame is not None else ""
        if notes.strip():
            parts.append(f"Notes:\n{notes}")
    return "\n\n".join(part for part in parts if part.strip())


def _reading_order(shapes) -> list:
    # Shapes without a position (rare: some placeholders) go first, as the slide lists them.
    return sorted(shapes, key=lambda shape: (shape.top or 0, shape.left or 0))


def _shape_texts(shape) -> Iterator[str]:
    from pptx.shapes.group import GroupShape

    # isinstance, not shape_type: python-pptx raises on shapes whose type it does not know
    if isinstance(shape, GroupShape):
        for child in _reading_order(shape.shapes):
            yield from _shape_texts(child)
    elif getattr(shape, "has_table", False) and shape.has_table:
        yield table_text(shape.table)
    elif getattr(shape, "has_chart", False) and shape.has_chart and shape.chart.has_title:
        yield _frame_text(shape.chart.chart_title)
    elif shape.has_text_frame:
        yield _frame_text(shape)


def _frame_text(shape) -> str:
    return _text(shape.text_frame.text) if shape.has_text_frame else ""


def _text(text: str) -> str:
    return text.replace("\v", "\n")  # python-pptx writes a line break inside a paragraph as \v


def table_text(table) -> str:
    """Rows of `header: value` lines when the first row names the columns, else cells joined by " | "."""
    rows = [[" ".join(cell.text.split()) for cell in row.cells if not cell.is_spanned] for row in table.rows]
    rows = [row for row in rows if any(row)]
    if len(rows) > 1 and len(rows[0]) > 1 and all(rows[0]) and looks_like_header(rows[0]):
        header = rows[0]
        return "\n\n".join(
            "\n".join(f"{name}: {cell}" for name, cell in zip(header, row, strict=False) if cell) for row in rows[1:]
        )
    return "\n".join(" | ".join(cell for cell in row if cell) for row in rows)


def _core_title(presentation) -> str:
    title = " ".join((presentation.core_properties.title or "").split())
    return "" if title.lower() in _PLACEHOLDER_TITLES else title


def _first_slide_title(presentation) -> str:
    for slide in presentation.slides:
        shape = slide.shapes.title
        return " ".join(shape.text_frame.text.split()) if shape is not None and shape.has_text_frame else ""
    return ""

"""What the library table's cells say and how wide its columns are: a short type from the format
table ("PDF", "MD"), the file name beside titles that collide, widths from the text they hold."""

from __future__ import annotations

import os
import time
from collections import Counter

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QHeaderView, QStyle, QTableView

from app.gui.format_list import CONTEXT
from ingest.readers.registry import find_format, formats

SHORT = 6  # a label longer than this ("Markdown", "OpenDocument text") gives way to its extension
TITLE_HINT = 260  # the title column's share of the pane's preferred width, in pixels
TITLE_LEAST = 120


def short_type(name: str) -> str:
    """The format's label from the table when it is short ("PDF", "Word", "文本"), else its first
    extension in capitals ("MD", "ODT"); the name itself for a format the table no longer has."""
    fmt = find_format(name)
    if fmt is None:
        return name.upper()
    if len(fmt.label) <= SHORT or not fmt.extensions:
        return QCoreApplication.translate(CONTEXT, fmt.label)
    return fmt.extensions[0].lstrip(".").upper()


def shown_titles(docs) -> dict[str, str]:
    """Each document's title as the table shows it: its file name where it has none, and
    "Title — file name" where two documents have the same title (a guide as PDF and Markdown)."""
    titles = {doc.id: doc.title or os.path.basename(doc.path) for doc in docs}  # not Path: 10,000 a refresh
    counts = Counter(title.casefold() for title in titles.values())
    if len(counts) == len(titles):
        return titles
    for doc in docs:
        title, name = titles[doc.id], os.path.basename(doc.path)
        if counts[title.casefold()] > 1 and title != name:
            titles[doc.id] = f"{title} — {name}"
    return titles


def added_text(timestamp: float) -> str:
    """ "2026-12-06 11:30" in local time. Not strftime: under PySide6 each call goes through its
    import hook, 17 µs, a sixth of a 10,000-document refresh."""
    t = time.localtime(timestamp)
    return f"{t.tm_year}-{t.tm_mon:02d}-{t.tm_mday:02d} {t.tm_hour:02d}:{t.tm_min:02d}"


def fit_columns(table: QTableView, samples: dict[int, list[str]]) -> int:
    """Size each column but the first (which stretches) to its header and the widest of its
    `samples`; returns their total width."""
    header = table.horizontalHeader()
    cell, head = table.fontMetrics(), header.fontMetrics()
    style = table.style()
    padding = 2 * style.pixelMetric(QStyle.PM_FocusFrameHMargin, None, table) + 12
    indicator = 2 * style.pixelMetric(QStyle.PM_HeaderMargin, None, header) + 16  # room for the sort arrow
    total = 0
    for column, texts in samples.items():
        label = table.model().headerData(column, header.orientation()) or ""
        width = max([head.horizontalAdvance(label) + indicator] + [cell.horizontalAdvance(t) + padding for t in texts])
        table.setColumnWidth(column, width)
        total += width
    header.setSectionResizeMode(QHeaderView.Interactive)
    header.setSectionResizeMode(0, QHeaderView.Stretch)
    return total


def type_samples() -> list[str]:
    return [short_type(fmt.name) for fmt in formats()]

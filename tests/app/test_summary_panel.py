"""The summary panel links every section's pages, synthetic ones ("p. ~2") too."""

from __future__ import annotations

import pytest

from engine.summarize import Summary, SummarySection

pytest.importorskip("PySide6")


def test_synthetic_page_sections_are_links_that_open_their_page(qtbot):
    from PySide6.QtCore import QUrl

    from app.gui.summary_panel import SummaryPanel

    panel = SummaryPanel()
    qtbot.addWidget(panel)
    sections = [SummarySection(1, 1, "- First", True), SummarySection(2, 4, "- <script>x</script>", True)]
    summary = Summary("doc", "notes.txt", "brief", "en", "Overview.", sections, 1, 2, 3, 0, {"total_ms": 10.0})
    panel.start("doc", "notes.txt")
    panel.show_summary(summary)
    html = panel.browser.toHtml()
    assert 'href="page:1"' in html and 'href="page:2"' in html
    assert "&lt;script&gt;" in html  # the model's HTML is shown as text
    with qtbot.waitSignal(panel.page_clicked) as clicked:
        panel.browser.anchorClicked.emit(QUrl("page:2"))  # what a click on "pp. ~2–~4" sends
    assert clicked.args == ["doc", 2]
    assert panel.markdown == summary.text  # Copy and Save give the Markdown without links

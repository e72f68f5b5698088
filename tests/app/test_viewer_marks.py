"""The viewer marks the passage, not a hint of it: every line of a cited PDF passage, across a page
break, on pages fitted to the viewer's width; a scan fitted to the width; a visible yellow mark
over the whole passage in text formats. Real files: the GeoTopo book of the corpus (pypdf's text
as DocDesk stores it, pdfium's text layer where the lines are), the sample guide in Markdown."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from app.gui.passage_marks import find_passage, passage_pages, pdf_passage_pages  # noqa: E402
from app.gui.viewer import CitationViewer  # noqa: E402
from ingest.readers import read_document  # noqa: E402
from tests.conftest import CORPUS, SAMPLES  # noqa: E402

GEOTOPO = CORPUS / "pdf-samples" / "009-pdflatex-geotopo" / "GeoTopo-komprimiert.pdf"


def test_a_passage_is_found_whatever_the_spaces_hyphens_and_ligatures():
    layer = "Ligatures such as\r\n\ufb01 are ex-\r\npanded, and control characters are removed.\r\nNext."
    found = find_passage(layer, "Ligatures such as fi are expanded, and control characters are removed.")
    assert found is not None and layer[found.start : found.end].endswith("removed.")
    assert layer[found.start : found.end].startswith("Ligatures")
    assert not found.runs_on and not found.began_before
    assert find_passage(layer, "Nothing of this is on the page at all, not one word of it") is None


def test_a_passage_over_a_page_break_is_found_on_both_pages():
    first = "Intro text. " + "The first half of the cited passage sits at the foot of page one. " * 2
    second = "and its second half opens page two before anything else is said. " * 2 + "Later text."
    passage = first[12:] + "\n\n" + second[:-12]
    found = passage_pages({1: first, 2: second, 3: "unrelated"}, 1, passage)
    assert sorted(found) == [1, 2]
    assert found[1].runs_on and found[1].start == 12 and not first[found[1].end :].strip()
    assert found[2].began_before and found[2].start == 0 and second[: found[2].end].endswith("said.")
    # Cited on its second page, it is found on the page before as well.
    assert sorted(passage_pages({1: first, 2: second}, 2, passage)) == [1, 2]


@pytest.fixture(scope="module")
def geotopo_pages():
    return [page.text for page in read_document(GEOTOPO, ocr=False).pages]


def test_every_line_of_a_real_passage_over_a_page_break_is_marked(geotopo_pages):
    # A passage as DocDesk's blocks hold it: the foot of page 10 and the head of page 11.
    passage = geotopo_pages[9][-400:] + "\n\n" + geotopo_pages[10][:400]
    marked = pdf_passage_pages(str(GEOTOPO), 10, passage)
    assert [page.number for page in marked] == [10, 11]
    foot, head = marked
    lines_foot = {round(box[1], 3) for box in foot.boxes}
    lines_head = {round(box[1], 3) for box in head.boxes}
    assert len(lines_foot) >= 5 and len(lines_head) >= 5  # lines, not five words
    assert min(lines_foot) > 0.4  # the foot of page 10 ...
    assert max(lines_head) < 0.6  # ... and the top of page 11
    assert foot.image.width == head.image.width == 1400


def test_a_passage_not_in_the_text_layer_leaves_the_whole_pdf_to_qtpdf():
    assert pdf_passage_pages(str(GEOTOPO), 10, "words that are nowhere in this book at all, none") == []


def test_the_viewer_shows_the_marked_pages_fitted_to_its_width(qtbot, geotopo_pages):
    viewer = CitationViewer()
    qtbot.addWidget(viewer)
    viewer.resize(700, 600)
    passage = geotopo_pages[9][-400:] + "\n\n" + geotopo_pages[10][:400]
    marked = pdf_passage_pages(str(GEOTOPO), 10, passage)
    viewer.show_source(str(GEOTOPO), "GeoTopo", 10, passage, [], "pdf", geotopo_pages[9], None, marked)
    qtbot.waitUntil(lambda: viewer.stack.currentWidget() is viewer.image_view, timeout=5_000)
    view = viewer.image_view
    assert view.pages == [10, 11] and "pages 10–11" in viewer.title.text()
    qtbot.waitUntil(lambda: abs(view.label.pixmap().width() - view.viewport().width()) <= 8, timeout=5_000)
    assert view.horizontalScrollBar().maximum() == 0  # nothing to scroll sideways
    qtbot.waitUntil(lambda: view.verticalScrollBar().value() > 0, timeout=5_000)  # to the first mark, low on p. 10
    viewer.resize(900, 600)  # wider: the pages follow
    qtbot.waitUntil(lambda: abs(view.label.pixmap().width() - view.viewport().width()) <= 8, timeout=5_000)
    assert viewer.whole.isVisible()
    viewer.whole.click()  # the whole PDF, at the cited page
    assert viewer.stack.currentWidget() is viewer.pdf_view
    qtbot.waitUntil(lambda: viewer.current_page() == 10, timeout=10_000)
    viewer.whole.click()
    assert viewer.stack.currentWidget() is view


def test_a_text_format_marks_the_whole_passage_in_yellow(qtbot):
    text = (SAMPLES / "docdesk-guide.md").read_text(encoding="utf-8")
    paragraphs = [p for p in text.split("\n\n") if len(p) > 120]
    start, end = text.index(paragraphs[2]), text.index(paragraphs[3]) + len(paragraphs[3])
    passage = " ".join(text[start:end].split())  # two paragraphs and what is between, spaced as a block holds them
    viewer = CitationViewer()
    qtbot.addWidget(viewer)
    viewer.show_source(str(SAMPLES / "docdesk-guide.md"), "Guide", 1, passage, [text], "markdown")
    marked = viewer.marked_text()
    assert " ".join(marked.split()) == passage
    mark = viewer.text.extraSelections()[0]
    assert mark.format.background().color().name() == "#ffd200"  # a visible yellow, focus or not
    assert not viewer.text.textCursor().hasSelection()


def test_a_source_of_many_pages_marks_the_cited_page_and_scrolls_to_it(qtbot):
    # A short document goes to the model whole: the source is all 7 pages, cited on page 3.
    guide = SAMPLES / "docdesk-guide-zh.pdf"
    pages = [page.text for page in read_document(guide, ocr=False).pages]
    passage = "\n".join(pages)
    marked = pdf_passage_pages(str(guide), 3, passage)
    numbers = [page.number for page in marked]
    assert 3 in numbers and all(page.boxes for page in marked), numbers
    cited = marked[numbers.index(3)]
    assert len({round(box[1], 3) for box in cited.boxes}) >= 4  # every line of the page, heading included
    viewer = CitationViewer()
    qtbot.addWidget(viewer)
    viewer.resize(700, 500)
    viewer.show_source(str(guide), "指南", 3, passage, [], "pdf", pages[2], None, marked)
    view = viewer.image_view
    qtbot.waitUntil(lambda: view.verticalScrollBar().value() > 0, timeout=5_000)
    # Scrolled past the page(s) before the cited one, to its first marked line.
    before = numbers.index(3)
    assert before == 0 or view.verticalScrollBar().value() > before * 0.8 * view.label.pixmap().height() / len(numbers)

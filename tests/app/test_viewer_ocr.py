"""The citation viewer on pages read by OCR: the page image, the cited lines marked on it."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from app.desk.services import DocDesk  # noqa: E402
from app.desk.settings import Settings  # noqa: E402
from app.gui.viewer import CitationViewer  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

pytestmark = pytest.mark.models

SCANS = ROOT / "tests" / "data" / "scans"


@pytest.mark.parametrize("name", ["en_huckfinn_c02-22_scan_no_text_layer.pdf", "en_phototest_rotated_90cw.png"])
def test_a_cited_passage_on_a_scan_is_marked_line_by_line_on_the_page_image(qtbot, tmp_path, name):
    desk = DocDesk(Settings(library=tmp_path / "library"))
    report = desk.add([SCANS / name])
    assert not report.failed, report.failed
    doc = desk.documents()[0]
    page = desk.pages(doc.id)[0]
    ocr = desk.ocr_page(doc.id, 1)
    assert ocr is not None and ocr.lines
    second, third = ocr.lines[1], ocr.lines[2]
    passage = page.text[second[0] : third[1]]  # the second and third lines, as a passage would quote them

    viewer = CitationViewer()
    qtbot.addWidget(viewer)
    viewer.show_source(doc.path, doc.title, 1, passage, [], doc.format, page.text, ocr)
    assert viewer.stack.currentWidget() is viewer.image_view
    assert viewer.image_view.marked == [second[2:6], third[2:6]]
    pixmap = viewer.image_view.label.pixmap()
    assert pixmap.width() > 300 and pixmap.height() > 300
    pixmap.save(str(tmp_path / "marked.png"))


def test_without_ocr_lines_a_pdf_still_opens_in_the_pdf_view(qtbot, tmp_path):
    from tests.conftest import SAMPLES

    viewer = CitationViewer()
    qtbot.addWidget(viewer)
    viewer.show_source(str(SAMPLES / "docdesk-guide.pdf"), "Guide", 1, "DocDesk is a private assistant", [], "pdf")
    assert viewer.stack.currentWidget() is viewer.pdf_view

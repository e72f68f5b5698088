"""OCR of scans and page photos with the bundled RapidOCR models: real pages rendered to images
(born-digital samples, so the true text is known), turned, skewed, in two columns, in Chinese, as
PNG, JPEG, multi-page TIFF, WebP and an image-only PDF; and through `docdesk add` and `list`."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ingest.errors import EmptyDocument
from ingest.readers import read_document
from tests.conftest import CORPUS, ROOT, SAMPLES

pytestmark = pytest.mark.models  # the OCR models are real, bundled in the rapidocr wheel

SCANS = ROOT / "tests" / "data" / "scans"
MULTICOLUMN = CORPUS / "pdf-samples" / "026-latex-multicolumn" / "multicolumn.pdf"


def render(pdf: Path, page: int = 0, dpi: int = 200):
    import pypdfium2

    document = pypdfium2.PdfDocument(str(pdf))
    try:
        return document[page].render(scale=dpi / 72).to_pil()
    finally:
        document.close()


def save(image, path: Path, **options) -> Path:
    image.save(path, **options)
    return path


@pytest.fixture(scope="module")
def guide_page():
    return render(SAMPLES / "docdesk-guide.pdf")


def words(text: str) -> str:
    return " ".join(text.split())


def test_a_png_of_a_page_is_read_with_its_lines_and_confidence(tmp_path, guide_page):
    result = read_document(save(guide_page, tmp_path / "guide.png"))
    assert result.format == "image" and len(result.pages) == 1
    page = result.pages[0]
    assert "DocDesk User Guide" in page.text
    assert "keeps everything in a library folder on your computer" in words(page.text)
    assert page.ocr is not None and page.ocr.confidence > 0.9
    start, end, x0, y0, x1, y1, score = page.ocr.lines[0]
    assert page.text[start:end] == "DocDesk User Guide"  # offsets point into the page text
    assert 0 < x0 < x1 < 1 and 0 < y0 < y1 < 0.5 and score > 0.9  # a box near the top of the page
    assert any(w.startswith("text recognised by OCR on 1 page(s)") for w in result.warnings)


@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_a_turned_page_is_read_upright(tmp_path, guide_page, degrees):
    turned = guide_page.rotate(degrees, expand=True)
    page = read_document(save(turned, tmp_path / f"turned{degrees}.png")).pages[0]
    assert "DocDesk User Guide" in page.text


def test_a_skewed_photo_as_jpeg_is_levelled_and_read_in_order(tmp_path, guide_page):
    skewed = guide_page.rotate(3.5, expand=True, fillcolor="white")
    page = read_document(save(skewed, tmp_path / "skewed.jpg", quality=85)).pages[0]
    assert "keeps everything in a library folder on your computer" in words(page.text)


def test_two_columns_are_read_column_by_column(tmp_path):
    page = read_document(save(render(MULTICOLUMN), tmp_path / "columns.png")).pages[0]
    text = words(page.text)
    # The left column's first sentence runs on over its line ends, not into the right column.
    assert "This is a sample document with two columns filled with Lorem Ipsum text." in text
    assert text.index("Two-Column Document") < text.index("This is a sample document")


@pytest.mark.parametrize(
    ("name", "most"),
    [("en_phototest.tif", 0.02), ("zh_multiline_cn2.png", 0.1), ("zh_hant_heart_sutra.jpg", 0.05)],
)
def test_real_scans_match_their_hand_made_transcripts(name, most):
    """Character error rate against a transcript typed from the image (tests/data/scans/LICENSES.md)."""
    from tests.bench.bench_ocr import cer

    path = SCANS / name
    result = read_document(path)
    truth = path.with_suffix(".transcript.txt").read_text(encoding="utf-8")
    assert cer(result.pages[0].text, truth) <= most, result.pages[0].text


def test_a_real_scanned_pdf_turned_four_ways_is_read_on_every_page():
    result = read_document(SCANS / "en_linn_rotated_0_90_180_270.pdf")  # JBIG2 images, rendered by pdfium
    assert len(result.pages) == 4 and all(p.ocr is not None for p in result.pages)
    for page in result.pages:  # the same page turned 0, 90, 180 and 270 degrees
        text = words(page.text)
        assert "32 Track MIDI Sequence Recorder" in text and "The LinnSequencer is a state-" in text, text[:300]


def test_a_phone_photo_is_turned_as_its_exif_says():
    page = read_document(SCANS / "en_boston_cooking_page_photo.jpg").pages[0]
    assert page.ocr.rotated == 0 and page.ocr.confidence > 0.9 and len(page.text) > 500


def test_a_multi_page_tiff_and_a_webp_are_read_page_by_page(tmp_path, guide_page):
    second = render(SAMPLES / "docdesk-guide.pdf", page=1)
    tiff = tmp_path / "two.tif"
    guide_page.convert("L").save(tiff, save_all=True, append_images=[second.convert("L")], compression="tiff_lzw")
    result = read_document(tiff)
    assert [p.number for p in result.pages] == [1, 2]
    assert "DocDesk User Guide" in result.pages[0].text and result.pages[1].text.strip()
    webp = read_document(save(guide_page, tmp_path / "guide.webp", quality=80))
    assert "DocDesk User Guide" in webp.pages[0].text


def test_an_image_only_pdf_is_read_by_ocr(tmp_path, guide_page):
    scan = save(guide_page.convert("RGB"), tmp_path / "scan.pdf", resolution=200)
    result = read_document(scan)
    assert result.format == "pdf"
    assert "DocDesk User Guide" in result.pages[0].text and result.pages[0].ocr is not None


def test_ocr_off_is_the_callers_choice_and_each_refusal_says_so(tmp_path, guide_page, embedder):
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    scan = save(guide_page.convert("RGB"), tmp_path / "scan.pdf", resolution=200)
    photo = save(guide_page, tmp_path / "page.png")
    library = Library(tmp_path / "lib")
    try:  # read in the child process, as the app reads: the choice travels with it
        report = Ingestor(library, embedder, ocr=False).add([scan, photo])
    finally:
        library.close()
    reasons = {Path(f["path"]).name: f["reason"] for f in report.failed}
    assert report.added == [] and set(reasons) == {"scan.pdf", "page.png"}
    assert reasons["scan.pdf"].startswith("no text layer (scanned?) on any of its 1 pages: turn OCR on")
    assert reasons["page.png"].startswith("an image (PNG) has text only through OCR, and OCR is off: turn OCR on")


def test_a_blank_photo_says_ocr_found_no_text(tmp_path):
    from PIL import Image

    blank = save(Image.new("RGB", (800, 600), (250, 250, 245)), tmp_path / "blank.png")
    with pytest.raises(EmptyDocument, match="no text found by OCR"):
        read_document(blank)


def test_a_truncated_image_gets_a_reason(tmp_path, guide_page):
    buffer = io.BytesIO()
    guide_page.save(buffer, format="PNG")
    cut = tmp_path / "cut.png"
    cut.write_bytes(buffer.getvalue()[:5000])
    from ingest.errors import IngestError

    with pytest.raises(IngestError, match="damaged"):
        read_document(cut)


def test_add_then_list_shows_the_ocr_flag_and_confidence(tmp_path, guide_page):
    scan = save(guide_page.convert("RGB"), tmp_path / "scan.pdf", resolution=200)
    env = dict(os.environ, DOCDESK_HOME=str(tmp_path / "lib"), DOCDESK_CONFIG=str(tmp_path / "none.toml"))
    env["DOCDESK_LOG_DIR"] = str(tmp_path / "logs")

    def docdesk(*args):
        done = subprocess.run([sys.executable, "-m", "app", *args], env=env, cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    docdesk("add", str(scan))
    listed = json.loads(docdesk("list", "--json"))["documents"][0]
    assert listed["status"] == "indexed" and listed["ocr"] is True and listed["ocr_pages"] == 1
    assert listed["ocr_confidence"] > 0.9
    assert "OCR 1p conf" in docdesk("list")
    found = json.loads(docdesk("search", "keeps", "everything", "in", "a", "library", "folder", "--json"))
    assert found["results"][0]["page"] == 1


def test_a_page_of_images_is_rendered_no_finer_than_its_pixels_and_read_as_well():
    import pypdfium2

    from ingest.readers.pdf import RENDER_DPI, ocr_render_dpi

    def dpi(pdf: Path, text_layer_whole: bool = True) -> float | None:
        document = pypdfium2.PdfDocument(str(pdf))
        try:
            return ocr_render_dpi(document[0], text_layer_whole)
        finally:
            document.close()

    huckfinn = SCANS / "en_huckfinn_c02-22_scan_no_text_layer.pdf"
    assert round(dpi(huckfinn)) == 150  # an 800-px-wide scan on a 384-pt page
    assert dpi(SCANS / "en_linn_skewed.pdf") == RENDER_DPI  # a 300-dpi scan, turned a little
    page = read_document(huckfinn).pages[0]
    # Read at its own 150 dpi the heading comes out whole (at 300 dpi OCR saw "apter").
    assert "ChapterII" in page.text.replace(" ", "") and "widow's garden" in page.text
    assert page.ocr is not None and page.ocr.confidence > 0.95


def test_a_short_text_layer_beside_an_icon_is_kept_not_replaced_by_ocr():
    import pypdfium2

    from ingest.readers.pdf import RENDER_DPI, ocr_render_dpi

    inline = CORPUS / "pdf-samples" / "008-reportlab-inline-image" / "inline-image.pdf"  # "Test" and a 16-px image
    document = pypdfium2.PdfDocument(str(inline))
    try:
        assert ocr_render_dpi(document[0], text_layer_whole=True) is None
        assert ocr_render_dpi(document[0], text_layer_whole=False) == RENDER_DPI  # a garbage layer: read the glyphs
    finally:
        document.close()
    page = read_document(inline).pages[0]
    assert page.text.strip() == "Test" and page.ocr is None

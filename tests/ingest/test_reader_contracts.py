"""Every reader of the format table against the reader contract (tests/contracts/reader_contract.py),
on the real files of tests/data and assets/samples. Word and HTML have none there: the Word files
are written by python-docx here, the HTML ones are the XHTML chapters of two of the EPUBs."""

from __future__ import annotations

import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from ingest.ocr import MAX_PIXELS, MAX_SIDE
from ingest.readers import open_document, read_document
from tests.contracts.reader_contract import (
    DATA,
    PDF_SAMPLES,
    SAMPLES,
    ReaderContract,
    fake_ocr,
    ooxml_damaged,
    zip_bomb,
    zip_with,
)
from tests.pdf_bytes import pdf_from_objects

OFFICE, ODF, EPUB, SCANS, CORPUS = DATA / "office", DATA / "odf", DATA / "epub", DATA / "scans", DATA / "corpus"


def _calls(monkeypatch, owner, name: str) -> list[int]:
    """Count the calls of `owner.name` (a module's function, a class's method) from now on."""
    original, calls = getattr(owner, name), []

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


# ---------------------------------------------------------------- PDF


class TestPdfReader(ReaderContract):
    format = "pdf"
    expected = {
        "docdesk-guide.pdf": "DocDesk User Guide",
        "docdesk-guide-zh.pdf": "使用指南",
        "pdflatex-4-pages.pdf": "Hello, here is some text without a meaning",
        "minimal-document.pdf": "Lorem ipsum dolor sit amet",
    }

    def files(self):
        return [
            SAMPLES / "docdesk-guide.pdf",
            SAMPLES / "docdesk-guide-zh.pdf",
            PDF_SAMPLES / "004-pdflatex-4-pages" / "pdflatex-4-pages.pdf",
            PDF_SAMPLES / "001-trivial" / "minimal-document.pdf",
        ]

    def damaged(self, tmp_path):
        return CORPUS / "broken" / "truncated.pdf"  # the GeoTopo book cut off at 700,000 bytes

    def multi_page(self, tmp_path):
        return PDF_SAMPLES / "004-pdflatex-4-pages" / "pdflatex-4-pages.pdf"

    def work(self, monkeypatch):
        import pypdf

        calls = _calls(monkeypatch, pypdf.PageObject, "extract_text")
        return lambda: len(calls)

    def check_other_limits(self, tmp_path, monkeypatch):
        """A page far larger than paper (200 x 200 inches, a line drawn on it) is rendered for OCR
        within ingest.ocr's pixel bounds, not at 300 dpi (60,000 px a side)."""
        drawing = b"0 0 m 14000 14000 l S"
        path = pdf_from_objects(
            tmp_path / "huge-page.pdf",
            [
                b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 14400 14400] /Contents 4 0 R >>",
                b"<< /Length %d >>\nstream\n%s\nendstream" % (len(drawing), drawing),
            ],
        )
        seen = []
        monkeypatch.setattr("ingest.ocr.ocr_image", lambda image: seen.append(image.size) or fake_ocr(image))
        stream = open_document(path, ocr=True)
        pages = list(stream.pages())
        assert len(seen) == 1 and pages[0].ocr is not None
        width, height = seen[0]
        assert max(width, height) <= MAX_SIDE and width * height <= MAX_PIXELS, seen
        return 1


# ---------------------------------------------------------------- text and Markdown


def _long_text(path: Path, megabytes: int = 3) -> Path:
    paragraph = "Tides rise and fall twice a day with the pull of the moon and the sun. " * 8 + "\n\n"
    path.write_text(paragraph * (megabytes * (1 << 20) // len(paragraph)), encoding="utf-8")
    return path


class _TextContract(ReaderContract):
    text_limit = ("ingest.readers.text", "MAX_DOCUMENT_CHARS")
    overshoot = 1 << 20  # a text file is decoded in 1 MB pieces

    def damaged(self, tmp_path):
        path = tmp_path / f"binary{self.files()[0].suffix}"
        path.write_bytes(bytes(range(256)) * 64)  # controls and NULs: not text in any encoding
        return path

    def multi_page(self, tmp_path):
        return _long_text(tmp_path / f"long{self.files()[0].suffix}")

    def big_file(self):
        return self.files()[-1]

    def work(self, monkeypatch):
        from ingest.readers import text

        calls = _calls(monkeypatch, text, "normalize_text")  # once per decoded piece
        return lambda: len(calls)


class TestTextReader(_TextContract):
    format = "text"
    expected = {
        "french-latin1.txt": "Le café est prêt. Les élèves étudient à l'école.",
        "chinese-gb18030.txt": "显卡驱动版本应当与 CUDA 版本匹配",
        "english-utf16.txt": "UTF-16 text with a byte order mark.",
    }

    @pytest.fixture(autouse=True)
    def _big(self, tmp_path_factory):
        self.big = _long_text(tmp_path_factory.mktemp("text") / "tides.txt")

    def files(self):
        encodings = CORPUS / "encodings"
        return [encodings / "french-latin1.txt", encodings / "chinese-gb18030.txt", encodings / "english-utf16.txt"]

    def big_file(self):
        return self.big


class TestMarkdownReader(_TextContract):
    format = "markdown"
    expected = {"docdesk-guide.md": "DocDesk User Guide", "docdesk-guide-zh.md": "DocDesk 使用指南"}

    @pytest.fixture(autouse=True)
    def _big(self, tmp_path_factory):
        self.big = _long_text(tmp_path_factory.mktemp("markdown") / "tides.md")

    def files(self):
        return [SAMPLES / "docdesk-guide.md", SAMPLES / "docdesk-guide-zh.md"]

    def big_file(self):
        return self.big

    def test_a_heading_is_the_title(self):
        assert read_document(SAMPLES / "docdesk-guide.md").title == "DocDesk User Guide"


# ---------------------------------------------------------------- HTML


@pytest.fixture(scope="module")
def html_files(tmp_path_factory) -> list[Path]:
    """Real XHTML: the chapters of two EPUBs of the IDPF samples, as files of their own."""
    folder = tmp_path_factory.mktemp("html")
    chapters = [("wasteland-woff-obf.epub", "EPUB/wasteland-content.xhtml"), ("georgia-cfi.epub", "EPUB/georgia.xhtml")]
    for book, member in chapters:
        with zipfile.ZipFile(EPUB / book) as archive:
            (folder / Path(member).name).write_bytes(archive.read(member))
    return sorted(folder.iterdir())


class TestHtmlReader(ReaderContract):
    format = "html"
    expected = {"wasteland-content.xhtml": "April is the cruellest month", "georgia.xhtml": "GEORGIA"}
    no_limit = "HTML is read whole; the chunker cuts its text at MAX_DOCUMENT_CHARS"

    @pytest.fixture(autouse=True)
    def _files(self, html_files):
        self.paths = html_files

    def files(self):
        return self.paths

    def damaged(self, tmp_path):
        path = tmp_path / "page.html"
        path.write_bytes(b"<html><body>" + bytes(range(32)) * 2000)  # markup, then binary
        return path


# ---------------------------------------------------------------- Office Open XML


@pytest.fixture(scope="module")
def docx_files(tmp_path_factory) -> list[Path]:
    import docx

    folder = tmp_path_factory.mktemp("docx")
    report = docx.Document()
    report.add_heading("Harbour survey 2024", 1)
    report.add_paragraph("The dredging of the north basin ended in March.")
    table = report.add_table(rows=2, cols=2)
    for row, cells in zip(table.rows, [("Basin", "Depth"), ("North", "12 m")], strict=True):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    for n in range(60):
        report.add_paragraph(f"Section {n}: the moorings of pier {n} were checked and their chains replaced. " * 3)
    report.save(folder / "harbour-survey.docx")
    note = docx.Document()
    note.add_paragraph("Minutes of the ferry committee: fares stay as they are.")
    note.core_properties.title = "Ferry minutes"
    note.save(folder / "ferry-minutes.docx")
    return sorted(folder.iterdir())


class _OfficeContract(ReaderContract):
    def damaged(self, tmp_path):
        return ooxml_damaged(self.files()[0], tmp_path)

    def oversized(self, tmp_path):
        source = self.files()[0]
        return zip_bomb(source, tmp_path / f"bomb{source.suffix}")


class TestDocxReader(_OfficeContract):
    format = "docx"
    expected = {
        "harbour-survey.docx": "Basin | Depth",
        "ferry-minutes.docx": "fares stay as they are",
    }

    @pytest.fixture(autouse=True)
    def _files(self, docx_files):
        self.paths = docx_files

    def files(self):
        return self.paths


class TestPptxReader(_OfficeContract):
    format = "pptx"
    expected = {"test_slides.pptx": "Group test text", "sld-notes.pptx": "Notes:"}

    def files(self):
        return [OFFICE / "test_slides.pptx", OFFICE / "sld-notes.pptx", OFFICE / "tbl-cell.pptx"]


class TestXlsxReader(_OfficeContract):
    format = "xlsx"
    expected = {"inventory-table.xlsx": "Type: Apple", "date.xlsx": "A: 2021-01-02"}

    def files(self):
        return [OFFICE / "inventory-table.xlsx", OFFICE / "date.xlsx", OFFICE / "issues.xlsx"]


# ---------------------------------------------------------------- CSV


class TestCsvReader(ReaderContract):
    format = "csv"
    expected = {"table.tsv": "name: 中国人", "doublequote.csv": "INCISO: A.N.E.P."}
    text_limit = ("ingest.readers.budget", "MAX_DOCUMENT_CHARS")  # the ceiling of the file's text budget

    def files(self):
        return [OFFICE / "table.tsv", OFFICE / "doublequote.csv", OFFICE / "table-with-accents.csv"]

    def damaged(self, tmp_path):
        path = tmp_path / "table.csv"
        path.write_bytes(bytes(range(256)) * 64)  # controls and NULs: not text in any encoding
        return path

    def big_file(self):
        return OFFICE / "table-with-accents.csv"  # 100,000 characters of rows

    def test_a_csv_that_is_no_table_is_read_as_text(self, tmp_path):
        path = tmp_path / "note.csv"
        path.write_text("Shopping list\nbread\nmilk\n", encoding="utf-8")
        stream = open_document(path)
        assert stream.format == "text" and stream.synthetic_pages


# ---------------------------------------------------------------- EPUB and OpenDocument


class TestEpubReader(ReaderContract):
    format = "epub"
    expected = {
        "childrens-literature.epub": "FAIRY STORIES",
        "cole-voyage-of-life.epub": "The Voyage of Life",
        "wasteland-woff-obf.epub": "April is the cruellest month",
    }

    def files(self):
        return sorted(EPUB.glob("*.epub"))

    def damaged(self, tmp_path):
        source = EPUB / "cole-voyage-of-life.epub"
        return zip_with(source, tmp_path / "damaged.epub", {"EPUB/cole.opf": b"<package><spine"})

    def oversized(self, tmp_path):
        return zip_bomb(EPUB / "cole-voyage-of-life.epub", tmp_path / "bomb.epub")


class _OdfContract(ReaderContract):
    def damaged(self, tmp_path):
        source = self.files()[0]
        return zip_with(source, tmp_path / f"damaged{source.suffix}", {"content.xml": b"<office:document-content"})

    def oversized(self, tmp_path):
        source = self.files()[0]
        return zip_bomb(source, tmp_path / f"bomb{source.suffix}")


class TestOdtReader(_OdfContract):
    format = "odt"
    expected = {"ClimateChange3.odt": "Climate change in context", "twolevellist.odt": "- - Subitem B.1"}

    def files(self):
        return [ODF / "ClimateChange3.odt", ODF / "simpletable.odt", ODF / "twolevellist.odt"]


class TestOdsReader(_OdfContract):
    format = "ods"
    expected = {"countrystatistics.ods": "Country: Austria"}

    def files(self):
        return [ODF / "countrystatistics.ods"]


class TestOdpReader(_OdfContract):
    format = "odp"
    expected = {"cols.odp": "Lorem ipsum dolor sit amet", "ol.odp": "Tsvey"}

    def files(self):
        return [ODF / "cols.odp", ODF / "ol.odp"]

    def multi_page(self, tmp_path):
        """Both real decks have one slide: the two as slides of one deck."""
        with zipfile.ZipFile(ODF / "cols.odp") as archive:
            content = archive.read("content.xml")
        start, end = content.index(b"<draw:page "), content.index(b"</draw:page>") + len(b"</draw:page>")
        twice = content[:end] + content[start:end] + content[end:]
        return zip_with(ODF / "cols.odp", tmp_path / "two-slides.odp", {"content.xml": twice})


# ---------------------------------------------------------------- images


def _png_header(path: Path, width: int, height: int) -> Path:
    """A PNG whose header declares width x height (and holds no pixels)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b""))
    return path


class TestImageReader(ReaderContract):
    """OCR itself is tested on these scans in test_ocr.py; here fake_ocr stands in for the models
    (one test below runs them on a small scan)."""

    format = "image"
    ocr = True
    expected = {"en_phototest.tif": "Recognised words of a 640 x 480 image."}

    def files(self):
        names = ["en_phototest.tif", "en_multipage_phototest_eurotext.tif", "en_phototest_rotated_90cw.png"]
        return [SCANS / name for name in [*names, "zh_en_num_banner.jpg", "nl_typewriter_linzensoep.webp"]]

    def damaged(self, tmp_path):
        data = (SCANS / "en_phototest_rotated_90cw.png").read_bytes()
        path = tmp_path / "cut.png"
        path.write_bytes(data[: len(data) // 2])
        return path

    def multi_page(self, tmp_path):
        return SCANS / "en_multipage_phototest_eurotext.tif"  # two frames

    def work(self, monkeypatch):
        calls = []
        monkeypatch.setattr("ingest.readers.image.ocr_image", lambda image: calls.append(1) or fake_ocr(image))
        return lambda: len(calls)

    def oversized(self, tmp_path):
        return _png_header(tmp_path / "bomb.png", 20_000, 10_000)  # 200 MP declared in 57 bytes

    @pytest.mark.models
    def test_the_models_read_a_small_scan(self):
        text = read_document(SCANS / "en_phototest.tif").pages[0].text
        assert "quick brown dog" in text


# ---------------------------------------------------------------- the package stays light

LIGHT = r"""
import sys
from pathlib import Path
import ingest.readers, ingest.readers.sniff
loaded = lambda: {m for m in sys.modules if m.startswith("ingest.readers.") or m in HEAVY}
HEAVY = {"lxml", "PIL", "pypdf", "pypdfium2", "docx", "pptx", "openpyxl", "numpy", "charset_normalizer"}
print(sorted(loaded()))
ingest.readers.open_document(Path(sys.argv[1]))
print(sorted(loaded()))
"""


def test_reader_modules_are_imported_only_when_a_file_of_their_format_comes():
    done = subprocess.run(
        [sys.executable, "-c", LIGHT, str(ODF / "countrystatistics.ods")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.splitlines()
    assert before == "['ingest.readers.registry', 'ingest.readers.sniff']"
    assert "'ingest.readers.odf'" in after and "'lxml'" in after
    for other in ("pdf", "docx", "pptx", "xlsx", "epub", "image", "csv_table", "PIL", "pypdf", "numpy"):
        assert f".{other}'" not in after and f"'{other}'" not in after, after

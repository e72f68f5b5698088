"""Every file of the test corpus (tests/data/corpus), read for real."""

from __future__ import annotations

import json

import pytest

from ingest.errors import DamagedDocument, EmptyDocument, EncryptedDocument, UnsupportedFormat
from ingest.readers import read_document
from ingest.readers.pdf import read_pdf
from ingest.readers.sniff import detect_format

UNREADABLE = {"017-unreadable-meta-data/unreadablemetadata.pdf"}  # pypdf: "Invalid object in /Pages"
PASSWORD = {"005-libreoffice-writer-password/libreoffice-writer-password.pdf": "openpassword"}


def _pdf_entries(corpus):
    data = json.loads((corpus / "pdf-samples" / "files.json").read_text())["data"]
    return [e for e in data if (corpus / "pdf-samples" / e["path"]).exists()]


def test_every_present_pdf_of_files_json_is_covered(corpus):
    listed = {e["path"] for e in _pdf_entries(corpus)}
    on_disk = {str(p.relative_to(corpus / "pdf-samples")) for p in (corpus / "pdf-samples").rglob("*.pdf")}
    assert on_disk == listed


def test_page_counts_agree_with_files_json(corpus):
    checked = 0
    for entry in _pdf_entries(corpus):
        if entry["path"] in UNREADABLE:
            continue
        result = read_pdf(corpus / "pdf-samples" / entry["path"], PASSWORD.get(entry["path"]))
        assert len(result.pages) == entry["pages"], entry["path"]
        assert [p.number for p in result.pages] == list(range(1, entry["pages"] + 1))
        checked += 1
    assert checked >= 30


def test_unreadable_pdf_reports_pypdfs_reason(corpus):
    with pytest.raises(DamagedDocument, match="Invalid object in /Pages"):
        read_document(corpus / "pdf-samples" / "017-unreadable-meta-data/unreadablemetadata.pdf")


def test_encrypted_pdf_needs_its_password(corpus):
    path = corpus / "pdf-samples" / "005-libreoffice-writer-password/libreoffice-writer-password.pdf"
    with pytest.raises(EncryptedDocument, match="encrypted: a password is needed"):
        read_document(path)
    with pytest.raises(EncryptedDocument, match="wrong"):
        read_document(path, password="not-it")
    assert "Lorem ipsum" in read_document(path, password="openpassword").pages[0].text


def test_scanned_pages_are_reported_and_text_pages_kept(corpus):
    result = read_document(corpus / "pdf-samples" / "007-imagemagick-images/imagemagick-images.pdf")
    assert any("no text layer nor text found by OCR" in w for w in result.warnings)  # photos, no print
    assert any(p.text for p in result.pages)


def test_image_only_pdf_fails_with_scan_reason(corpus):
    with pytest.raises(EmptyDocument, match=r"no text layer, and OCR found no printed text"):
        read_document(corpus / "pdf-samples" / "019-grayscale-image/grayscale-image.pdf")


def test_ligatures_and_hyphenation_in_a_real_two_column_pdf(corpus):
    text = " ".join(p.text for p in read_document(corpus / "pdf-samples/026-latex-multicolumn/multicolumn.pdf").pages)
    assert "filled" in text and "ﬁ" not in text
    assert "adipiscing" in text and "adip-\niscing" not in text


def test_arabic_text_is_extracted(corpus):
    text = read_document(corpus / "pdf-samples/015-arabic/habibi.pdf").pages[0].text
    assert "habibi" in text and any("\u0600" <= ch <= "\u06ff" for ch in text)


@pytest.mark.parametrize(
    ("name", "error", "reason"),
    [
        ("empty.pdf", EmptyDocument, "empty file"),
        ("truncated.pdf", DamagedDocument, "cut off"),
        ("html-named.pdf", UnsupportedFormat, "named .pdf but the content is HTML"),
        ("random-bytes.docx", UnsupportedFormat, "not a Word document"),
        ("zip-without-document.docx", UnsupportedFormat, "a ZIP archive without word/document.xml"),
        ("nul-bytes.txt", UnsupportedFormat, "NUL bytes"),
    ],
)
def test_each_broken_file_fails_with_its_own_reason(corpus, name, error, reason):
    with pytest.raises(error, match=reason):
        read_document(corpus / "broken" / name)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("chinese-gb18030.txt", "第一段：显卡驱动版本应当与 CUDA 版本匹配，否则推理框架会报错。"),
        ("chinese-utf8-bom.txt", "第一段：显卡驱动版本应当与 CUDA 版本匹配，否则推理框架会报错。"),
        (
            "french-latin1.txt",
            "Le café est prêt. Les élèves étudient à l'école.\nDeuxième ligne: garçon, naïve, façade.",
        ),
        ("english-utf16.txt", "UTF-16 text with a byte order mark.\nSecond line of the file."),
    ],
)
def test_each_encoding_decodes_to_the_right_text(corpus, name, expected):
    # NFKC folds the full-width colon and comma; compare with the same folding applied.
    import unicodedata

    text = read_document(corpus / "encodings" / name).pages[0].text
    assert unicodedata.normalize("NFKC", expected) in text
    assert "\ufffd" not in text


def test_utf16_without_bom_and_gbk_are_detected(tmp_path):
    (tmp_path / "a.txt").write_bytes("Plain words in UTF-16 without a mark.".encode("utf-16-le"))
    (tmp_path / "b.txt").write_bytes("驱动版本与显卡型号必须匹配，否则会出现错误。".encode("gbk"))
    assert read_document(tmp_path / "a.txt").pages[0].text == "Plain words in UTF-16 without a mark."
    assert read_document(tmp_path / "b.txt").pages[0].text.startswith("驱动版本与显卡型号必须匹配")


def test_html_keeps_visible_text_only(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><title>Setup notes</title><style>p{color:red}</style></head><body>"
        "<script>var secret = 'do not index';</script><h1>Drivers</h1><p>Use driver 535 &amp; CUDA 12.</p>"
        "<table><tr><td>GPU</td><td>V100</td></tr></table></body></html>",
        encoding="utf-8",
    )
    result = read_document(page)
    text = result.pages[0].text
    assert result.title == "Setup notes" and result.format == "html"
    assert "Use driver 535 & CUDA 12." in text and "GPU" in text and "V100" in text
    assert "secret" not in text and "color" not in text


def test_docx_paragraphs_and_tables_in_order(tmp_path):
    import docx

    document = docx.Document()
    document.add_heading("Quarterly report", 1)
    document.add_paragraph("Revenue grew in the third quarter.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Region", "Growth"
    table.cell(1, 0).text, table.cell(1, 1).text = "North", "12%"
    document.add_paragraph("The outlook is stable.")
    path = tmp_path / "report.docx"
    document.save(path)
    text = read_document(path).pages[0].text
    assert text.index("Revenue grew") < text.index("North | 12%") < text.index("The outlook is stable.")


def test_content_beats_extension(tmp_path):
    (tmp_path / "notes").write_text("no extension but plain text", encoding="utf-8")
    (tmp_path / "pdf-with-wrong-name.txt").write_bytes(b"%PDF-1.4\n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    (tmp_path / "notes.xyz").write_text("plain text under a name DocDesk does not claim", encoding="utf-8")
    assert detect_format(tmp_path / "notes", (tmp_path / "notes").read_bytes()) == "text"
    with pytest.raises(UnsupportedFormat, match="named .txt but the content is a PDF"):
        detect_format(tmp_path / "pdf-with-wrong-name.txt", (tmp_path / "pdf-with-wrong-name.txt").read_bytes())
    assert detect_format(tmp_path / "image.png", (tmp_path / "image.png").read_bytes()) == "image"
    with pytest.raises(UnsupportedFormat, match="unsupported file type .xyz"):
        detect_format(tmp_path / "notes.xyz", (tmp_path / "notes.xyz").read_bytes())


def test_markdown_gets_synthetic_pages_and_its_heading_as_title(tmp_path):
    paragraphs = [f"Paragraph {i} " + "word " * 100 for i in range(40)]
    path = tmp_path / "long.md"
    path.write_text("# A long note\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
    result = read_document(path)
    assert result.title == "A long note" and result.synthetic_pages
    assert len(result.pages) > 5
    assert all(len(p.text) <= 3600 for p in result.pages)

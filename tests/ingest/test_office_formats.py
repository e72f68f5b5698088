"""Slides, spreadsheets and CSV (issue 14): real files from public test suites (tests/data/office,
sources in LICENSES.md) and files written here with python-pptx and openpyxl, read for real."""

from __future__ import annotations

import bisect
import io
import re
import zipfile
from pathlib import Path

import pytest

from ingest.chunking import Chunker, join_pages
from ingest.errors import DamagedDocument, EncryptedDocument, OversizedDocument, UnsupportedFormat
from ingest.readers import read_document
from ingest.readers.sniff import detect_format, is_supported_name
from ingest.records import ReadResult
from tests.ingest.test_hostile_readers import (
    MB,
    assert_refused_as_a_bomb,
    deflated,
    read_in_child,
    repeated,
    write_zip,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "office"


@pytest.fixture(scope="module")
def chunker():
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder

    tokenizer = SentenceTransformerEmbedder()  # the tokenizer loads without torch
    return Chunker(tokenizer.token_offsets, tokenizer.max_tokens)


def page_of(chunker: Chunker, result: ReadResult, phrase: str) -> int:
    """The page a citation of `phrase` opens: the page holding it, within the passage that holds it."""
    text, starts = join_pages(result.pages)
    at = text.index(phrase)
    page = result.pages[bisect.bisect_right(starts, at) - 1].number
    passages = [p for p in chunker.chunk(result.pages).passages if phrase in p.text]
    assert passages and passages[0].page <= page <= passages[0].page_end, (page, passages)
    return page


# ---------------------------------------------------------------- PPTX written here


def harbour_deck(path: Path) -> Path:
    """Five slides: a title slide, a blank one, a table with notes, grouped text, and bullets."""
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    title_slide = deck.slides.add_slide(deck.slide_layouts[0])
    title_slide.shapes.title.text = "Harbour fees 2024"
    title_slide.placeholders[1].text = "Board meeting, March"
    deck.slides.add_slide(deck.slide_layouts[6])  # blank: no text at all
    table_slide = deck.slides.add_slide(deck.slide_layouts[5])
    table_slide.shapes.title.text = "Fees by vessel"
    # Added bottom first: reading order is by position, not by the order shapes were added.
    table_slide.shapes.add_textbox(Inches(1), Inches(6), Inches(4), Inches(1)).text = "Source: port authority"
    table = table_slide.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2)).table
    for r, row in enumerate([("Vessel", "Fee"), ("Ferry", "120 EUR"), ("Cargo ship", "950 EUR")]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    table_slide.notes_slide.notes_text_frame.text = "Mention the winter discount for ferries."
    group_slide = deck.slides.add_slide(deck.slide_layouts[6])
    group = group_slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(5), Inches(3), Inches(3), Inches(1)).text = "Right box in a group"
    group.shapes.add_textbox(Inches(1), Inches(3), Inches(3), Inches(1)).text = "Left box in a group"
    group_slide.shapes.add_textbox(Inches(1), Inches(1), Inches(3), Inches(1)).text = "Above the group"
    bullets = deck.slides.add_slide(deck.slide_layouts[1])
    bullets.shapes.title.text = "Next steps"
    bullets.placeholders[1].text = "Dredging the north basin starts in May\nNew mooring rules"
    deck.save(path)
    return path


def test_each_slide_is_its_page_and_an_empty_slide_keeps_its_number(tmp_path):
    result = read_document(harbour_deck(tmp_path / "harbour.pptx"))
    assert result.format == "pptx" and not result.synthetic_pages
    assert [p.number for p in result.pages] == [1, 2, 3, 4, 5]
    assert result.pages[0].text == "Harbour fees 2024\n\nBoard meeting, March"
    assert result.pages[1].text == ""
    assert result.pages[4].text.startswith("Next steps\n\nDredging the north basin")
    assert result.title == "Harbour fees 2024"  # no core title: the first slide's


def test_a_slide_gives_title_shapes_in_reading_order_table_and_notes_last(tmp_path):
    text = read_document(harbour_deck(tmp_path / "harbour.pptx")).pages[2].text
    assert text == (
        "Fees by vessel\n\n"
        "Vessel: Ferry\nFee: 120 EUR\n\nVessel: Cargo ship\nFee: 950 EUR\n\n"
        "Source: port authority\n\n"
        "Notes:\nMention the winter discount for ferries."
    )


def test_group_shapes_are_read_inside_in_reading_order(tmp_path):
    text = read_document(harbour_deck(tmp_path / "harbour.pptx")).pages[3].text
    assert text == "Above the group\n\nLeft box in a group\n\nRight box in a group"


def test_a_phrase_on_a_slide_is_cited_with_that_slide(tmp_path, chunker):
    result = read_document(harbour_deck(tmp_path / "harbour.pptx"))
    assert page_of(chunker, result, "winter discount") == 3
    assert page_of(chunker, result, "north basin") == 5


# ---------------------------------------------------------------- PPTX from python-pptx's test suite


def test_real_deck_with_text_box_group_table_and_core_title():
    result = read_document(DATA / "test_slides.pptx")
    assert result.title == "python-pptx was here!" and len(result.pages) == 1
    text = result.pages[0].text
    order = ["Test text", "Group test text", "Col head 1: Cell text 1\nCol head 2: Cell text 2", "Box 1", "Box 2"]
    assert [text.index(part) for part in order] == sorted(text.index(part) for part in order)


def test_placeholder_core_title_gives_way_to_the_first_slide_title():
    # python-pptx reports "PowerPoint Presentation" for a file without core properties.
    assert read_document(DATA / "no-core-props.pptx").title == "Minimal Deck"
    assert read_document(DATA / "sld-notes.pptx").title == "sld-notes"  # "Presentation", no slide title


def test_real_notes_and_slide_without_text():
    pages = read_document(DATA / "sld-notes.pptx").pages
    assert [(p.number, p.text) for p in pages] == [(1, "Notes:\nNotes"), (2, "")]


def test_real_tables_with_merged_cells_and_a_header_row():
    pages = read_document(DATA / "tbl-cell.pptx").pages
    assert pages[1].text == "merged cell\n\nmerged cell"  # a merged cell counts once per table
    assert pages[2].text == "a: d\nb: e\nc: f\n\na: g\nb: h\nc: i"
    assert "Text run in table cell" in read_document(DATA / "txt-text.pptx").pages[1].text


# ---------------------------------------------------------------- XLSX


def test_formulas_give_the_values_excel_cached():
    # calamine's issues.xlsx: =CONCATENATE("a","b") cached "ab", =A1>A2 cached FALSE.
    result = read_document(DATA / "issues.xlsx")
    datatypes = result.pages[0].text
    assert datatypes == "Sheet: datatypes\n\nA: 1\n\nA: 1.5\n\nA: ab\n\nA: FALSE\n\nA: test\n\nA: 2016-10-20"
    assert "=" not in "".join(p.text for p in result.pages)
    shared = read_document(DATA / "shared_formula_simple.xlsx").pages[0].text  # B = A * 2, a shared formula
    assert shared == "Sheet: Sheet1\n\nA: 1\nB: 2\n\nA: 2\nB: 4\n\nA: 3\nB: 6"


def test_each_sheet_is_a_page_with_header_value_rows():
    result = read_document(DATA / "issues.xlsx")
    assert [p.text.split("\n", 1)[0] for p in result.pages] == [
        "Sheet: datatypes", "Sheet: Sheet1", "Sheet: issue2", "Sheet: issue5", "Sheet: issue6", "Sheet: spc_chrs",
    ]  # fmt: skip
    assert not result.synthetic_pages and result.format == "xlsx"
    inventory = read_document(DATA / "inventory-table.xlsx").pages[0].text
    assert "Item: 2\nType: Banana\nQuantity: 200" in inventory
    assert (
        "label: celsius\nvalue: 22.2222\n\nlabel: fahrenheit\nvalue: 72"
        in read_document(DATA / "temperature.xlsx").pages[0].text
    )


def test_dates_and_durations_read_naturally():
    text = read_document(DATA / "date.xlsx").pages[0].text
    assert "A: 2021-01-01\nB: 15" in text and "A: 10 days, 15:10:10" in text


def test_empty_sheets_keep_their_pages():
    pages = read_document(DATA / "any_sheets.xlsx").pages  # Visible, Hidden, VeryHidden (+ a chart sheet)
    assert [p.number for p in pages] == [1, 2, 3] and pages[0].text.startswith("Sheet: Visible")


def written_workbook(path: Path) -> Path:
    import datetime as dt

    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Budget"
    sheet.append(["Harbour budget 2024"])  # a title above the table
    sheet.append([])
    sheet.append(["Item", "Amount", None, "Due"])
    sheet.append(["Dredging", 1234.5, "unnamed column", dt.datetime(2024, 3, 1)])
    sheet.append(["Moorings", 0.1 + 0.2, None, dt.datetime(2024, 3, 1, 14, 30)])
    sheet.append(["Total", "=SUM(B4:B5)", None, dt.date(2024, 12, 31)])  # openpyxl caches no value
    workbook.properties.title = "Harbour budget"
    workbook.save(path)
    return path


def test_numbers_dates_preamble_and_formulas_without_a_cached_value(tmp_path):
    result = read_document(written_workbook(tmp_path / "budget.xlsx"))
    assert result.title == "Harbour budget"
    assert result.pages[0].text == (
        "Sheet: Budget\n\nHarbour budget 2024\n\n"
        "Item: Dredging\nAmount: 1234.5\nC: unnamed column\nDue: 2024-03-01\n\n"
        "Item: Moorings\nAmount: 0.3\nDue: 2024-03-01 14:30\n\n"
        "Item: Total\nDue: 2024-12-31"
    )


def big_workbook(path: Path, rows: int = 400) -> Path:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Ledger"
    sheet.append(["Entry", "Account", "Amount"])
    for n in range(1, rows + 1):
        sheet.append([n, f"account {n:04d} for harbour operations", n * 10.25])
    workbook.create_sheet("Summary").append(["Total", rows * (rows + 1) / 2 * 10.25])
    workbook.save(path)
    return path


def test_a_long_sheet_is_split_at_row_ends_and_each_page_names_its_sheet_and_rows(tmp_path, chunker):
    result = read_document(big_workbook(tmp_path / "ledger.xlsx"))
    assert result.synthetic_pages
    *ledger, summary = result.pages
    assert len(ledger) > 5 and summary.text.startswith("Sheet: Summary\n\n")
    assert [p.number for p in result.pages] == list(range(1, len(result.pages) + 1))
    spans = []
    for page in ledger:
        head, body = page.text.split("\n\n", 1)
        match = re.fullmatch(r"Sheet: Ledger \(rows (\d+)-(\d+)\)", head)
        assert match, head
        first, last = int(match[1]), int(match[2])
        spans.append((first, last))
        assert body.startswith(f"Entry: {first - 1}\n") and body.endswith(f"Amount: {(last - 1) * 10.25:.15g}")
        assert len(page.text) < 3200
    assert spans[0][0] == 2 and spans[-1][1] == 401
    assert all(a[1] + 1 == b[0] for a, b in zip(spans, spans[1:], strict=False))  # no row lost or repeated
    page = page_of(chunker, result, "account 0300 for")
    first, last = spans[page - 1]
    assert first <= 301 <= last  # entry 300 is spreadsheet row 301


# ---------------------------------------------------------------- CSV and TSV


def test_csv_rows_come_out_as_header_value_on_split_pages(chunker):
    result = read_document(DATA / "encoding-issue-274.csv")
    assert result.format == "csv" and result.synthetic_pages and len(result.pages) > 10
    assert (
        result.pages[0].text.startswith("Sheet: encoding-issue-274.csv (rows 2-")
        and "id: nz/acc\nname: Accident Compensation Corporation\nabbreviation: ACC\n" in result.pages[0].text
    )
    assert all(p.text.startswith("Sheet: encoding-issue-274.csv (rows ") for p in result.pages)
    assert result.title == "encoding-issue-274"
    page = page_of(chunker, result, "Westland District Council")
    assert page == len(result.pages)  # near the end of the file


def test_quoted_cells_semicolons_and_tabs():
    quoted = read_document(DATA / "doublequote.csv").pages[0].text
    assert "NOMBREINCISO: Administración Nacional de Educación Pública\n" in quoted  # quoted, with commas inside
    assert "AÑO: 2019\n" in quoted
    accents = read_document(DATA / "table-with-accents.csv").pages[0].text  # Latin-1, ";" separated
    assert (
        "Classement: 3 stars\nQuartier: All\nDate: 01-01-13\n" in accents and "Occupancy rate: 0,611553068" in accents
    )
    tsv = read_document(DATA / "table.tsv")
    assert (
        tsv.format == "csv" and tsv.pages[0].text == "id: 1\nname: english\n\nid: 2\nname: 中国人\n\nid: 3\nname: \\N"
    )


def test_a_csv_that_is_not_a_table_is_read_as_text(tmp_path):
    path = tmp_path / "note.csv"
    path.write_text("Remember to renew the harbour licence.\nCall the port office, then the bank.\n", encoding="utf-8")
    result = read_document(path)
    assert result.format == "text" and result.pages[0].text.startswith("Remember to renew")
    (tmp_path / "small.csv").write_text("name,fee\nferry,120\n", encoding="utf-8")
    assert read_document(tmp_path / "small.csv").pages[0].text == "name: ferry\nfee: 120"


# ---------------------------------------------------------------- broken, hostile, mislabelled


def _members_of(path: Path, **replace) -> list:
    with zipfile.ZipFile(path) as archive:
        return [replace.get(name) or deflated(name, archive.read(name)) for name in archive.namelist()]


def test_xlsx_whose_sheet_is_hundreds_of_mb_of_zeros_is_refused_before_parsing(tmp_path):
    source = written_workbook(tmp_path / "source.xlsx")
    bomb = repeated("xl/worksheets/sheet1.xml", b"<?xml version='1.0'?><worksheet>", bytes(MB), 400)
    path = write_zip(tmp_path / "bomb.xlsx", _members_of(source, **{"xl/worksheets/sheet1.xml": bomb}))
    assert path.stat().st_size < MB
    assert_refused_as_a_bomb(read_in_child(path), "Excel")


def test_pptx_bomb_that_lies_about_its_size_is_stopped_while_decompressing(tmp_path):
    from dataclasses import replace

    source = harbour_deck(tmp_path / "source.pptx")
    bomb = repeated("ppt/slides/slide1.xml", b"<?xml version='1.0'?><p:sld>", b"<a:t>lol</a:t>" * 80_000, 400)
    lie = replace(bomb, size=min(100 * len(bomb.raw), 150 * MB))
    path = write_zip(tmp_path / "bomb.pptx", _members_of(source, **{"ppt/slides/slide1.xml": lie}))
    with pytest.raises(OversizedDocument, match=r"the PowerPoint file expands .*\(a zip bomb\?\).*slide1.xml"):
        read_document(path)


def test_broken_files_get_a_reason(tmp_path):
    with pytest.raises(DamagedDocument, match=r"damaged Excel workbook: KeyError: .*xl/sharedStrings.xml"):
        read_document(DATA / "issue_419.xlsx")  # its workbook names a part the ZIP does not hold
    deck = harbour_deck(tmp_path / "deck.pptx").read_bytes()
    (tmp_path / "cut.pptx").write_bytes(deck[: len(deck) // 2])
    with pytest.raises(DamagedDocument, match="damaged ZIP container"):
        read_document(tmp_path / "cut.pptx")
    members = _members_of(
        tmp_path / "deck.pptx", **{"ppt/slides/slide1.xml": deflated("ppt/slides/slide1.xml", b"<p:sld")}
    )
    with pytest.raises(DamagedDocument, match=r"damaged PowerPoint presentation: \w+"):
        read_document(write_zip(tmp_path / "bad-xml.pptx", members))


def test_a_pptx_or_xlsx_that_is_another_zip_says_what_it_is(tmp_path):
    import docx

    docx.Document().save(tmp_path / "letter.docx")
    (tmp_path / "letter.xlsx").write_bytes((tmp_path / "letter.docx").read_bytes())
    with pytest.raises(
        UnsupportedFormat, match="named .xlsx but the content is a Word document, not an Excel workbook"
    ):
        read_document(tmp_path / "letter.xlsx")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("photos/readme.txt", "holiday pictures")
    (tmp_path / "holiday.pptx").write_bytes(buffer.getvalue())
    with pytest.raises(
        UnsupportedFormat,
        match="named .pptx but not a PowerPoint presentation: a ZIP archive without ppt/presentation.xml",
    ):
        read_document(tmp_path / "holiday.pptx")
    (tmp_path / "slides.pptx").write_text("just text", encoding="utf-8")
    with pytest.raises(
        UnsupportedFormat, match=r"named .pptx but not a PowerPoint presentation \(not a ZIP container\)"
    ):
        read_document(tmp_path / "slides.pptx")


_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def test_legacy_binary_office_files_say_to_save_them_in_the_new_format(tmp_path):
    for suffix, modern in ((".xls", ".xlsx"), (".ppt", ".pptx"), (".doc", ".docx")):
        path = tmp_path / f"old{suffix}"
        path.write_bytes(_OLE + bytes(504) + "Workbook".encode("utf-16-le") + bytes(4096))
        assert is_supported_name(path)  # picked up by a folder scan, so the user sees why it fails
        with pytest.raises(UnsupportedFormat, match=rf"legacy binary Office format \({suffix}\): save it as {modern}"):
            read_document(path)
    encrypted = tmp_path / "secret.xlsx"
    encrypted.write_bytes(_OLE + bytes(504) + "EncryptedPackage".encode("utf-16-le") + bytes(4096))
    with pytest.raises(EncryptedDocument, match="password-protected"):
        read_document(encrypted)


# ---------------------------------------------------------------- recognised by content


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data, zipfile.ZIP_STORED if name == "mimetype" else zipfile.ZIP_DEFLATED)
    return path


@pytest.mark.parametrize(
    ("mimetype", "fmt"),
    [
        (b"application/epub+zip", "epub"),
        (b"application/vnd.oasis.opendocument.text", "odt"),
        (b"application/vnd.oasis.opendocument.spreadsheet", "ods"),
        (b"application/vnd.oasis.opendocument.presentation", "odp"),
    ],
)
def test_epub_and_opendocument_are_known_by_their_mimetype_member(tmp_path, mimetype, fmt):
    path = _zip(tmp_path / "book", {"mimetype": mimetype, "content.xml": b"<x/>"})
    assert detect_format(path, path.read_bytes()) == fmt
    named = tmp_path / f"book.{fmt}"
    named.write_bytes(path.read_bytes())
    assert is_supported_name(named) and detect_format(named, named.read_bytes()) == fmt


@pytest.mark.parametrize(
    ("name", "head"),
    [
        ("scan.png", b"\x89PNG\r\n\x1a\n"),
        ("photo.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF"),
        ("fax.tif", b"II*\x00\x08\x00\x00\x00"),
        ("fax.tiff", b"MM\x00*\x00\x00\x00\x08"),
        ("page.webp", b"RIFF\x24\x00\x00\x00WEBPVP8 "),
        ("no-extension", b"\x89PNG\r\n\x1a\n"),
    ],
)
def test_images_are_known_by_their_magic_bytes(tmp_path, name, head):
    path = tmp_path / name
    path.write_bytes(head + bytes(64))
    assert detect_format(path, path.read_bytes()) == "image"


def test_ooxml_kinds_and_mislabelled_images(tmp_path):
    deck, book = harbour_deck(tmp_path / "deck"), written_workbook(tmp_path / "book")
    assert detect_format(deck, deck.read_bytes()) == "pptx" and detect_format(book, book.read_bytes()) == "xlsx"
    (tmp_path / "photo.png").write_text("not a picture", encoding="utf-8")
    with pytest.raises(UnsupportedFormat, match="named .png but not an image"):
        detect_format(tmp_path / "photo.png", b"not a picture")
    with pytest.raises(UnsupportedFormat, match=r"unsupported file type \.xyz: DocDesk reads PDF, Word, PowerPoint"):
        detect_format(tmp_path / "a.xyz", b"text")
    for suffix in (".pptx", ".xlsx", ".csv", ".tsv", ".epub", ".odt", ".ods", ".odp", ".png", ".jpeg", ".webp"):
        assert is_supported_name(Path(f"file{suffix}"))

"""EPUB and OpenDocument readers, on real files of public test suites (tests/data/epub, tests/data/odf,
see their LICENSES.md) and on files built here for what those suites lack (bombs, DRM, passwords)."""

from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path

import pytest

from ingest.errors import DamagedDocument, EmptyDocument, EncryptedDocument, OversizedDocument
from ingest.readers.epub import read_epub
from ingest.readers.odf import read_odf

DATA = Path(__file__).resolve().parents[1] / "data"
EPUBS = DATA / "epub"
ODFS = DATA / "odf"


def _epub(path: Path):
    return read_epub(path, path.read_bytes())


def _odf(path: Path):
    return read_odf(path, path.read_bytes(), path.suffix[1:])


def _zip(members: dict[str, str | bytes], mimetype: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), mimetype, compress_type=zipfile.ZIP_STORED)
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


# --- EPUB: real books ---------------------------------------------------------------------


def test_page_list_pages_follow_the_printed_book():
    result = _epub(EPUBS / "childrens-literature.epub")
    assert result.format == "epub" and not result.synthetic_pages
    assert result.title == "Children's Literature"
    numbers = [page.number for page in result.pages]
    assert numbers == list(range(169, 261))  # the book's own pages 169-260, as its page list has them
    pages = {page.number: page.text for page in result.pages}
    # <span epub:type="pagebreak" id="Page_172"> falls mid-sentence: each half on its own page
    assert pages[171].endswith('preached crusades of a "return to nature."')
    assert pages[172].startswith("172 Many modern writers have tried to recapture")
    assert "Pages" not in pages[169][:200]  # the hidden page-list nav is not text
    assert result.warnings == []


def test_chapters_come_in_spine_order_with_synthetic_pages():
    result = _epub(EPUBS / "cole-voyage-of-life.epub")
    assert result.synthetic_pages and result.title == "Thomas Cole - The Voyage of Life"
    text = "\n".join(page.text for page in result.pages)
    headings = ["The Voyage of Life", "Childhood", "Youth", "Manhood", "Old Age"]
    positions = [text.index(f"\n{h}\n") if i else text.index(h) for i, h in enumerate(headings)]
    assert positions == sorted(positions)
    assert [page.number for page in result.pages] == list(range(1, len(result.pages) + 1))
    assert any(page.text.startswith("Manhood\n") for page in result.pages)  # a chapter starts its page


def test_a_page_list_of_cfis_falls_back_to_synthetic_pages():
    result = _epub(EPUBS / "georgia-cfi.epub")
    assert result.synthetic_pages and result.title == "Georgia"
    assert any("page list points to nowhere" in w for w in result.warnings)
    assert result.pages[0].text.startswith("GEORGIA")


def test_obfuscated_fonts_are_not_drm():
    result = _epub(EPUBS / "wasteland-woff-obf.epub")
    assert result.title == "The Waste Land"
    assert "April is the cruellest month" in "\n".join(p.text for p in result.pages)


# --- EPUB: built books --------------------------------------------------------------------

_CONTAINER = """<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"""


def _opf(spine: str, title: str = "Built Book", extra: str = "") -> str:
    return f"""<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></metadata>
<manifest><item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
<item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/>
<item id="c2" href="text/two.xhtml" media-type="application/xhtml+xml"/>
<item id="notes" href="text/notes.xhtml" media-type="application/xhtml+xml"/>{extra}</manifest>
<spine toc="ncx">{spine}</spine></package>"""


def _xhtml(body: str) -> str:
    return f'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body>{body}</body></html>'


_NCX = """<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
<navMap><navPoint id="n1"><navLabel><text>Preface</text></navLabel><content src="text/one.xhtml"/></navPoint>
<navPoint id="n2"><navLabel><text>Chapter Two</text></navLabel><content src="text/two.xhtml"/></navPoint></navMap>
<pageList><pageTarget type="front" value="1"><navLabel><text>i</text></navLabel><content src="text/one.xhtml#pi"/></pageTarget>
<pageTarget type="normal" value="1"><navLabel><text>1</text></navLabel><content src="text/two.xhtml#p1"/></pageTarget>
<pageTarget type="normal" value="2"><navLabel><text>2</text></navLabel><content src="text/two.xhtml#p2"/></pageTarget>
</pageList></ncx>"""

_CHAPTERS = {
    "OEBPS/text/one.xhtml": _xhtml('<p id="pi">A preface about lighthouses.</p>'),
    "OEBPS/text/two.xhtml": _xhtml(
        '<h1 id="p1">Chapter Two</h1><p>The keeper climbed the stairs<span id="p2"/> and lit the lamp.</p>'
    ),
    "OEBPS/text/notes.xhtml": _xhtml("<p>Endnote: lamps burned whale oil.</p>"),
}


def _book(members: dict[str, str] | None = None) -> bytes:
    """A small EPUB 2 (NCX page list, one non-linear item); `members` replace or add files."""
    files = {"META-INF/container.xml": _CONTAINER, "OEBPS/toc.ncx": _NCX, **_CHAPTERS}
    files["OEBPS/content.opf"] = _opf('<itemref idref="notes" linear="no"/><itemref idref="c1"/><itemref idref="c2"/>')
    return _zip({**files, **(members or {})}, "application/epub+zip")


def test_ncx_page_list_with_roman_front_matter_keeps_the_printed_labels():
    result = read_epub(Path("b.epub"), _book())
    assert not result.synthetic_pages and result.title == "Built Book"
    # "i" is no int: pages are numbered in order and say their printed label
    assert [p.number for p in result.pages] == [1, 2, 3]
    assert result.pages[0].text == "[p. i]\n\nA preface about lighthouses."
    assert result.pages[1].text == "[p. 1]\n\nChapter Two\n\nThe keeper climbed the stairs"
    # non-linear items come after the linear ones, on the page that was open
    assert result.pages[2].text == "[p. 2]\n\nand lit the lamp.\n\nEndnote: lamps burned whale oil."


def test_drm_encrypted_content_is_refused_with_a_reason():
    encryption = """<?xml version="1.0"?><encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<EncryptedData xmlns="http://www.w3.org/2001/04/xmlenc#"><EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
<CipherData><CipherReference URI="OEBPS/text/two.xhtml"/></CipherData></EncryptedData></encryption>"""
    with pytest.raises(EncryptedDocument, match=r"encrypted \(DRM\) EPUB: DocDesk cannot read it"):
        read_epub(Path("b.epub"), _book({"META-INF/encryption.xml": encryption}))


def test_broken_epubs_get_reasons():
    with pytest.raises(DamagedDocument, match="not a readable ZIP container"):
        read_epub(Path("b.epub"), b"PK\x03\x04 this is no zip")
    no_container = _zip({"OEBPS/content.opf": _opf("")}, "application/epub+zip")
    with pytest.raises(DamagedDocument, match="container.xml is missing"):
        read_epub(Path("b.epub"), no_container)
    no_opf = _zip({"META-INF/container.xml": _CONTAINER}, "application/epub+zip")
    with pytest.raises(DamagedDocument, match="package document OEBPS/content.opf is missing"):
        read_epub(Path("b.epub"), no_opf)
    with pytest.raises(DamagedDocument, match="content.opf is not well-formed XML"):
        read_epub(Path("b.epub"), _book({"OEBPS/content.opf": "<package><manifest>"}))


def test_sloppy_xhtml_is_read_as_html_and_empty_books_are_refused():
    sloppy = read_epub(Path("b.epub"), _book({"OEBPS/text/one.xhtml": "<p>Caf&eacute; <b>open"}))
    assert "Café open" in sloppy.pages[0].text
    assert any("not well-formed XHTML" in w for w in sloppy.warnings)
    blank = {f"OEBPS/text/{n}.xhtml": _xhtml("<p> </p>") for n in ("one", "two", "notes")}
    with pytest.raises(EmptyDocument):
        read_epub(Path("b.epub"), _book(blank))
    without_page_list = {"OEBPS/toc.ncx": _NCX.split("<pageList>")[0] + "</ncx>", **blank}
    with pytest.raises(EmptyDocument):
        read_epub(Path("b.epub"), _book(without_page_list))


def test_entities_are_not_expanded():
    laughs = '<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    chapter = f'<?xml version="1.0"?><!DOCTYPE html [{laughs}]><html xmlns="http://www.w3.org/1999/xhtml"><body><p>&l9;</p></body></html>'
    started = time.perf_counter()
    result = read_epub(Path("b.epub"), _book({"OEBPS/text/notes.xhtml": chapter}))
    assert time.perf_counter() - started < 2
    assert "lollol" not in "".join(p.text for p in result.pages)


def test_a_zip_bomb_chapter_is_refused():
    bomb = _xhtml("<p>" + " " * (40 << 20) + "</p>")
    with pytest.raises(OversizedDocument, match=r"the EPUB file expands more than 100 times \(a zip bomb\?\)"):
        read_epub(Path("b.epub"), _book({"OEBPS/text/one.xhtml": bomb}))


# --- OpenDocument: real files -------------------------------------------------------------


def test_odt_soft_page_breaks_are_pages():
    result = _odf(ODFS / "ClimateChange3.odt")
    assert result.format == "odt" and not result.synthetic_pages
    assert result.title == "Climate change impact in Europe"
    assert len(result.pages) == 5
    assert result.pages[1].text.startswith("CO2 in the atmosphere")
    assert "280 ppm (parts per million)" in result.pages[1].text
    assert result.pages[3].text.startswith("How we can adapt to change")


def test_odt_lists_and_tables():
    lists = _odf(ODFS / "twolevellist.odt")
    assert lists.synthetic_pages
    assert (
        lists.pages[0].text
        == "Line 1\n\n- Item A\n\n- Item B\n\n- - Subitem B.1\n\n- - Subitem B.2 (bold)\n\n- Item C\n\nLine 4"
    )
    table = _odf(ODFS / "simpletable.odt")
    assert table.pages[0].text == "Cell 1 | Cell 2\n\nCell 3 (bold) | Cell 4 (italic)"


def test_ods_sheets_are_pages_of_header_value_rows():
    result = _odf(ODFS / "countrystatistics.ods")
    assert result.format == "ods" and result.synthetic_pages
    assert len(result.pages) == 2
    first, second = (page.text for page in result.pages)
    assert first.startswith("Sheet: Population\n\nCountry: Austria\nPopulation in millions: 8.3\nArea km2: 83858")
    assert second.startswith("Sheet: HDI")
    assert "Iceland" in second


def test_odp_slides_lists_and_title():
    result = _odf(ODFS / "ol.odp")
    assert result.format == "odp" and not result.synthetic_pages
    assert result.title == "PowerPoint Presentation"  # meta.xml's, however odd
    assert result.pages[0].text.startswith("OL\n\n- Eins\n\n- Tsvey\n\n- - Dray")
    frames = _odf(ODFS / "cols.odp")
    assert "11 Lorem ipsum dolor sit amet" in frames.pages[0].text and "Col 3" in frames.pages[0].text


# --- OpenDocument: built files ------------------------------------------------------------

_OFFICE = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"'
)
_MIMETYPES = {
    "odt": "application/vnd.oasis.opendocument.text",
    "ods": "application/vnd.oasis.opendocument.spreadsheet",
    "odp": "application/vnd.oasis.opendocument.presentation",
}


def _odf_file(kind: str, body: str, **members: str) -> bytes:
    tag = {"odt": "text", "ods": "spreadsheet", "odp": "presentation"}[kind]
    content = f'<?xml version="1.0"?><office:document-content {_OFFICE}><office:body><office:{tag}>{body}</office:{tag}></office:body></office:document-content>'
    return _zip({"content.xml": content, **members}, _MIMETYPES[kind])


def test_odp_speaker_notes_follow_the_slide_text():
    slide = (
        '<draw:page draw:name="{name}"><draw:frame presentation:class="title"><draw:text-box><text:p>{title}</text:p>'
        "</draw:text-box></draw:frame><draw:frame><draw:text-box><text:list><text:list-item><text:p>{point}</text:p>"
        "</text:list-item></text:list></draw:text-box></draw:frame><presentation:notes><draw:page-thumbnail/>"
        "<draw:frame><draw:text-box><text:p>{note}</text:p></draw:text-box></draw:frame></presentation:notes></draw:page>"
    )
    body = slide.format(name="s1", title="Quarterly review", point="Revenue grew", note="Mention the new office") + (
        slide.format(name="s2", title="Outlook", point="Hiring", note="Keep it short")
    )
    result = read_odf(Path("deck.odp"), _odf_file("odp", body), "odp")
    assert result.title == "Quarterly review"  # no meta.xml: the first slide's title
    assert [p.number for p in result.pages] == [1, 2]
    assert result.pages[0].text == "Quarterly review\n\n- Revenue grew\n\nNotes:\nMention the new office"
    assert result.pages[1].text.endswith("Notes:\nKeep it short")


def test_ods_repeated_empty_rows_cost_nothing():
    body = (
        '<table:table table:name="Bomb"><table:table-row><table:table-cell office:value-type="string"><text:p>Item</text:p>'
        '</table:table-cell><table:table-cell office:value-type="string"><text:p>Price</text:p></table:table-cell></table:table-row>'
        '<table:table-row><table:table-cell office:value-type="string"><text:p>Tea</text:p></table:table-cell>'
        '<table:table-cell office:value-type="currency" office:currency="EUR" office:value="3.5"><text:p>3,50 €</text:p>'
        '</table:table-cell><table:table-cell table:number-columns-repeated="16382"/></table:table-row>'
        '<table:table-row table:number-rows-repeated="1048574"><table:table-cell table:number-columns-repeated="16384"/>'
        "</table:table-row></table:table>"
    )
    # and a filled row repeated a million times is kept a bounded number of times
    filled = (
        '<table:table table:name="Filled"><table:table-row table:number-rows-repeated="1000000">'
        '<table:table-cell table:number-columns-repeated="1000000"><text:p>x</text:p></table:table-cell>'
        "</table:table-row></table:table>"
    )
    started = time.perf_counter()
    result = read_odf(Path("bomb.ods"), _odf_file("ods", body + filled), "ods")
    assert time.perf_counter() - started < 10
    assert result.pages[0].text == "Sheet: Bomb\n\nItem: Tea\nPrice: 3.5 EUR"
    assert any("kept 1000 times" in w for w in result.warnings)
    assert any("right of column 1024" in w for w in result.warnings)


def test_big_sheets_split_at_rows_and_say_which():
    rows = "".join(
        f'<table:table-row><table:table-cell><text:p>row {n}</text:p></table:table-cell><table:table-cell office:value-type="float" '
        f'office:value="{n}"><text:p>{n}</text:p></table:table-cell></table:table-row>'
        for n in range(1, 401)
    )
    header = "<table:table-row><table:table-cell><text:p>Name</text:p></table:table-cell><table:table-cell><text:p>Amount</text:p></table:table-cell></table:table-row>"
    result = read_odf(
        Path("big.ods"), _odf_file("ods", f'<table:table table:name="Ledger">{header}{rows}</table:table>'), "ods"
    )
    assert len(result.pages) > 1
    assert result.pages[0].text.startswith("Sheet: Ledger (rows 2-")
    assert result.pages[-1].text.split("\n")[0].endswith("-401)")
    assert "Name: row 250\nAmount: 250" in "\n".join(p.text for p in result.pages)


def test_odt_title_from_first_heading_and_notes_inline():
    body = (
        '<text:h text:outline-level="1">Field Report</text:h><text:p>Water was found<text:note><text:note-citation>1</text:note-citation>'
        '<text:note-body><text:p>At 40 m.</text:p></text:note-body></text:note> at the site.<text:s text:c="1000000000"/>End</text:p>'
    )
    result = read_odf(Path("r.odt"), _odf_file("odt", body), "odt")
    assert result.title == "Field Report"
    assert result.pages[0].text == "Field Report\n\nWater was found (At 40 m.) at the site. End"


def test_broken_and_locked_odf_files_get_reasons():
    with pytest.raises(DamagedDocument, match="not a readable ZIP container"):
        read_odf(Path("x.odt"), b"PK\x03\x04 broken", "odt")
    with pytest.raises(DamagedDocument, match="content.xml .* is missing"):
        read_odf(Path("x.odt"), _zip({"meta.xml": "<x/>"}, _MIMETYPES["odt"]), "odt")
    truncated = _zip({"content.xml": f"<office:document-content {_OFFICE}><office:body><office:text><text:p>Hi"}, "x")
    with pytest.raises(DamagedDocument, match="content.xml is not well-formed XML"):
        read_odf(Path("x.odt"), truncated, "odt")
    with pytest.raises(EmptyDocument):
        read_odf(Path("x.ods"), _odf_file("ods", '<table:table table:name="S"/>'), "ods")
    manifest = (
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        '<manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data/></manifest:file-entry></manifest:manifest>'
    )
    locked = _zip({"content.xml": b"\x93\x11binary", "META-INF/manifest.xml": manifest}, _MIMETYPES["odt"])
    with pytest.raises(EncryptedDocument, match="password-protected OpenDocument file"):
        read_odf(Path("x.odt"), locked, "odt")


def test_odf_zip_bomb_is_refused():
    bomb = _odf_file("odt", "<text:p>" + " " * (40 << 20) + "</text:p>")
    with pytest.raises(OversizedDocument, match="the OpenDocument file expands more than 100 times"):
        read_odf(Path("x.odt"), bomb, "odt")

"""Hostile and damaged inputs (issue 13): each file is built here from real bytes and read for real."""

from __future__ import annotations

import io
import json
import random
import struct
import subprocess
import sys
import zipfile
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from ingest.errors import DamagedDocument, EmptyDocument, IngestError, UnsupportedFormat
from ingest.reader_process import read_stream
from ingest.readers import finish_result, read_document
from ingest.readers.pdf import PdfStream
from tests.pdf_bytes import pdf_from_objects

ROOT = Path(__file__).resolve().parents[2]
MB = 1024 * 1024

# ---------------------------------------------------------------- ZIP containers, by hand


@dataclass(frozen=True)
class Member:
    """One ZIP entry: its raw deflate stream and what the directory says about it."""

    name: str
    raw: bytes
    crc: int
    size: int  # declared uncompressed size (a bomb may lie)


def deflated(name: str, data: bytes) -> Member:
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return Member(name, packer.compress(data) + packer.flush(), zlib.crc32(data), len(data))


def repeated(name: str, prefix: bytes, chunk: bytes, times: int) -> Member:
    """`prefix` + `chunk` * `times`, deflated without ever holding it: after a full flush a
    deflate block refers to nothing before it, so the chunk's block can be repeated."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    head = packer.compress(prefix) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(chunk) + packer.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(prefix)
    for _ in range(times):
        crc = zlib.crc32(chunk, crc)
    return Member(name, head + block * times + packer.flush(), crc, len(prefix) + len(chunk) * times)


def write_zip(path: Path, members: list[Member]) -> Path:
    """A ZIP file of deflated members, local headers and central directory agreeing."""
    body, directory = bytearray(), bytearray()
    for m in members:
        name = m.name.encode()
        fields = (20, 0, 8, 0, 0x21, m.crc, len(m.raw), m.size, len(name), 0)
        directory += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0, len(body)) + name
        body += struct.pack("<4s5H3L2H", b"PK\x03\x04", *fields) + name + m.raw
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(directory), len(body), 0)
    path.write_bytes(bytes(body + directory + end))
    return path


def docx_members(**replacements: Member | None) -> list[Member]:
    """The parts of a real Word file (python-docx's template), some replaced or left out."""
    import docx

    buffer = io.BytesIO()
    document = docx.Document()
    document.add_heading("Hostile input", 1)
    document.add_paragraph("A paragraph that must survive.")
    document.save(buffer)
    members = []
    with zipfile.ZipFile(buffer) as archive:
        for name in archive.namelist():
            member = replacements.get(name, deflated(name, archive.read(name)))
            if member is not None:
                members.append(member)
    return members


def body_xml(inner: bytes) -> tuple[bytes, bytes]:
    """document.xml split around its body content: (before, after)."""
    ns = b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    return b"<?xml version='1.0' encoding='UTF-8'?><w:document " + ns + b"><w:body>" + inner, b"</w:body></w:document>"


CHILD = r"""
import json, resource, sys, time
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # a regression fails, it does not swap
import docx, lxml.etree  # loaded before measuring: the growth is the reading's own
from ingest.readers import read_document
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
try:
    result = read_document(Path(sys.argv[1]))
    outcome = {"error": None, "reason": "", "text": result.pages[0].text[:200]}
except Exception as exc:
    outcome = {"error": type(exc).__name__, "reason": str(exc)}
outcome["seconds"] = time.perf_counter() - started
outcome["growth_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps(outcome))
"""


def read_in_child(path: Path) -> dict:
    """read_document in a fresh process: its outcome, seconds and peak memory growth (MB)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- DOCX zip bombs


def assert_refused_as_a_bomb(outcome: dict, kind: str) -> None:
    """A child's read_document outcome: refused for its expanded size, fast, in bounded memory."""
    assert outcome["error"] == "OversizedDocument", outcome
    assert f"the {kind} file expands to more than 200 MB (a zip bomb?)" in outcome["reason"]
    assert outcome["growth_mb"] < 300 and outcome["seconds"] < 10, outcome


def zeros_bomb(path: Path) -> Path:
    """A Word file whose document.xml is 400 MB, nearly all zeros, from ~450 kB."""
    head, _ = body_xml(b"")
    return write_zip(path, docx_members(**{"word/document.xml": repeated("word/document.xml", head, bytes(MB), 400)}))


def test_docx_whose_document_xml_is_hundreds_of_mb_of_zeros_is_refused_fast_in_bounded_memory(tmp_path):
    path = zeros_bomb(tmp_path / "zeros.docx")
    assert path.stat().st_size < MB
    assert_refused_as_a_bomb(read_in_child(path), "Word")


def test_the_reader_process_reports_a_docx_bomb_as_that_files_failure(tmp_path):
    from ingest.reader_process import Finished, read_stream

    messages: list = []
    read_stream(7, str(zeros_bomb(tmp_path / "bomb.docx")), None, messages.append)
    assert len(messages) == 1 and isinstance(messages[0], Finished) and messages[0].job == 7
    assert messages[0].error.startswith("the Word file expands to more than 200 MB (a zip bomb?)")


def test_docx_bomb_that_declares_small_sizes_is_stopped_while_decompressing(tmp_path):
    # 400 MB of valid paragraphs from ~1 MB; the directory claims 100 MB, within the ratio limit.
    head, tail = body_xml(b"")
    bomb = repeated("word/document.xml", head, b"<w:p><w:r><w:t>lol</w:t></w:r></w:p>" * 28_000, 400)
    lie = replace(bomb, size=min(100 * len(bomb.raw), 150 * MB))
    path = write_zip(tmp_path / "liar.docx", docx_members(**{"word/document.xml": lie}))
    outcome = read_in_child(path)
    assert outcome["error"] == "OversizedDocument", outcome
    assert "(a zip bomb?)" in outcome["reason"] and "word/document.xml" in outcome["reason"]
    assert outcome["growth_mb"] < 300 and outcome["seconds"] < 10, outcome


def test_docx_part_that_outgrows_its_declared_size_is_refused(tmp_path):
    head, tail = body_xml(b"".join(b"<w:p><w:r><w:t>line %d</w:t></w:r></w:p>" % i for i in range(100_000)))
    honest = deflated("word/document.xml", head + tail)
    lie = replace(honest, size=honest.size // 4)
    path = write_zip(tmp_path / "grows.docx", docx_members(**{"word/document.xml": lie}))
    with pytest.raises(IngestError, match=r"expands beyond the size it declares \(a zip bomb\?\)"):
        read_document(path)


def test_docx_limits_on_declared_sizes(tmp_path):
    from ingest.errors import OversizedDocument
    from ingest.readers.zipguard import ZipLimits, checked_members

    path = write_zip(tmp_path / "parts.docx", docx_members())
    with zipfile.ZipFile(path) as archive:
        assert len(checked_members(archive)) == len(archive.namelist())
        with pytest.raises(OversizedDocument, match=r"holds \d+ parts, more than 5 \(a zip bomb\?\)"):
            checked_members(archive, ZipLimits(members=5))
        with pytest.raises(OversizedDocument, match=r"expands to more than 0.2 MB \(a zip bomb\?\).*styles"):
            checked_members(archive, ZipLimits(part_bytes=MB // 5))
        with pytest.raises(OversizedDocument, match=r"expands to more than 0.5 MB \(a zip bomb\?\).*together"):
            checked_members(archive, ZipLimits(total_bytes=MB // 2))
        with pytest.raises(OversizedDocument, match=r"expands more than 2 times \(a zip bomb\?\)"):
            checked_members(archive, ZipLimits(ratio=2, ratio_floor=1000))


def test_docx_picture_parts_are_never_decompressed(tmp_path):
    # A picture of 300 MB of zeros: the text parts are all DocDesk needs, so it costs nothing.
    import docx

    document = docx.Document()
    document.add_paragraph("Text beside a picture.")
    document.add_picture(io.BytesIO(png_pixel()))
    document.save(tmp_path / "real.docx")
    with zipfile.ZipFile(tmp_path / "real.docx") as archive:
        image = next(n for n in archive.namelist() if n.startswith("word/media/"))
        members = [deflated(n, archive.read(n)) for n in archive.namelist() if n != image]
    members.append(repeated(image, b"", bytes(MB), 300))
    outcome = read_in_child(write_zip(tmp_path / "picture-bomb.docx", members))
    assert outcome["error"] is None and "Text beside a picture." in outcome["text"], outcome
    assert outcome["growth_mb"] < 100 and outcome["seconds"] < 10, outcome


def png_pixel() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0\xff\0\0"))
        + chunk(b"IEND", b"")
    )


def test_a_normal_docx_reads_as_before(tmp_path):
    path = write_zip(tmp_path / "plain.docx", docx_members())
    result = read_document(path)
    assert result.pages[0].text == "Hostile input\n\nA paragraph that must survive."


# ---------------------------------------------------------------- DOCX titles


def _without_core_properties(source: Path, target: Path) -> Path:
    """A copy of a Word file as some writers save it: no docProps/core.xml at all."""
    with zipfile.ZipFile(source) as archive:
        members = []
        for name in archive.namelist():
            data = archive.read(name)
            if name == "docProps/core.xml":
                continue
            if name in ("_rels/.rels", "[Content_Types].xml"):
                data = re_remove(data, rb"<(Relationship|Override)[^>]*core[^>]*/>")
            members.append(deflated(name, data))
    return write_zip(target, members)


def re_remove(data: bytes, pattern: bytes) -> bytes:
    import re

    return re.sub(pattern, b"", data)


def _saved_docx(path: Path, heading: str | None, first: str, title: str | None = None) -> Path:
    import docx

    document = docx.Document()
    if heading:
        document.add_heading(heading, 1)
    document.add_paragraph(first)
    document.add_paragraph("Second paragraph of the body.")
    if title is not None:
        document.core_properties.title = title
    document.save(path)
    return path


def test_docx_without_core_properties_is_titled_by_its_first_heading(tmp_path):
    source = _saved_docx(tmp_path / "source.docx", "Budget review 2024", "The budget grew.")
    path = _without_core_properties(source, tmp_path / "nocore.docx")
    with zipfile.ZipFile(path) as archive:
        assert "docProps/core.xml" not in archive.namelist()
    assert read_document(path).title == "Budget review 2024"


def test_docx_with_an_empty_title_uses_its_heading_then_first_line_then_file_name(tmp_path):
    assert read_document(_saved_docx(tmp_path / "a.docx", "Minutes of March", "Present: all.")).title == (
        "Minutes of March"
    )
    assert read_document(_saved_docx(tmp_path / "b.docx", None, "Travel notes")).title == "Travel notes"
    long_first = "This first paragraph is a long sentence " * 5
    assert read_document(_saved_docx(tmp_path / "c-report.docx", None, long_first)).title == "c-report"
    placeholder = _saved_docx(tmp_path / "d.docx", "Real heading", "Body.", title="Word Document")
    assert read_document(placeholder).title == "Real heading"
    assert read_document(_saved_docx(tmp_path / "e.docx", "Heading", "Body.", title="Set title")).title == "Set title"


# ---------------------------------------------------------------- text


def test_utf8_text_with_one_stray_byte_is_read_with_a_warning(tmp_path):
    good = "第一段：显卡驱动版本应当与 CUDA 版本匹配。Grüße aus Köln, café crème.\n"
    path = tmp_path / "stray.txt"
    path.write_bytes(good.encode() * 20 + b"\xff" + good.encode() * 20)
    result = read_document(path)
    text = result.pages[0].text
    assert text.count("\ufffd") == 1 and "Grüße aus Köln" in text and "显卡驱动版本" in text
    assert any("1 invalid byte" in w for w in result.warnings), result.warnings


def test_ascii_text_with_one_stray_byte_is_read(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"Meeting notes for the driver upgrade.\n" * 30 + b"\xff\n" + b"Last line.\n")
    text = read_document(path).pages[0].text
    assert text.startswith("Meeting notes") and text.endswith("Last line.")


def test_binary_content_is_still_refused(tmp_path):
    (tmp_path / "random.txt").write_bytes(random.Random(13).randbytes(8192))
    (tmp_path / "controls.txt").write_bytes(bytes(range(1, 32)) * 200)
    (tmp_path / "nuls.txt").write_bytes(b"text\x00\x00\x00 more text\x00" * 100)
    with pytest.raises(UnsupportedFormat, match="binary content"):
        read_document(tmp_path / "random.txt")
    with pytest.raises(UnsupportedFormat, match=r"binary content \(\d+ control bytes"):
        read_document(tmp_path / "controls.txt")
    with pytest.raises(UnsupportedFormat, match=r"binary content \(NUL bytes\)"):
        read_document(tmp_path / "nuls.txt")


# ---------------------------------------------------------------- HTML


def _html(tmp_path: Path, markup: str):
    path = tmp_path / "page.html"
    path.write_text(markup, encoding="utf-8")
    return read_document(path)


def test_html_without_end_of_head_gives_its_body_text(tmp_path):
    result = _html(tmp_path, "<html><head><title>Setup</title><meta charset='utf-8'><body><p>Install the driver.</p>")
    assert result.title == "Setup" and result.pages[0].text == "Install the driver."
    result = _html(tmp_path, "<html><head><title>Setup</title><h1>No body tag</h1><p>Still text.</p></html>")
    assert result.pages[0].text == "No body tag\n\nStill text."


def test_text_after_an_unclosed_svg_survives_with_a_warning(tmp_path):
    result = _html(tmp_path, "<html><body><p>Before.</p><svg><path d='M0 0'/><p>After the svg.</p><p>End.</p></body>")
    assert result.pages[0].text == "Before.\n\nAfter the svg.\n\nEnd."
    assert any("unclosed <svg>" in w for w in result.warnings), result.warnings
    result = _html(tmp_path, "<body><div>One<svg><g><path/></g>two</div><div>Three</div><svg>four</body>")
    assert result.pages[0].text == "Onetwo\n\nThree\n\nfour"
    assert any("unclosed <svg>" in w for w in result.warnings)


@pytest.mark.parametrize("tag", ["script", "style", "noscript", "object"])
def test_text_after_an_unclosed_skipped_element_survives(tmp_path, tag):
    result = _html(tmp_path, f"<html><body><p>Before.</p><{tag}>var a = 1;\n<p>After it.</p><p>End.</p></body></html>")
    text = result.pages[0].text
    assert text.startswith("Before.") and text.endswith("After it.\n\nEnd.")
    assert "var a" not in text or tag in ("noscript", "object")  # their content is markup, read as text
    assert any(f"unclosed <{tag}>" in w for w in result.warnings), result.warnings


def test_closed_skipped_elements_stay_hidden(tmp_path):
    markup = "<html><body><p>One</p><svg><title>icon</title><text>label</text></svg><script>x<y</script><p>Two</p>"
    result = _html(tmp_path, markup)
    assert result.pages[0].text == "One\n\nTwo" and result.warnings == []
    assert result.title == "One"  # the svg's <title> is not the page's


# ---------------------------------------------------------------- PDF

_FONT = b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"
READABLE = b"BT /F1 12 Tf 72 700 Td (Readable words on this page) Tj ET"
BROKEN = b"BT /F1 12 Tf 72 700 Td (Readable words) Tj <4G> Tj ET"  # not hex: pypdf raises on the page
IMAGE_ONLY = b"q 100 0 0 100 72 600 cm Q"  # draws nothing with text, as a scan's page


def write_pdf(path: Path, contents: list[bytes]) -> Path:
    """A PDF of one page per content stream, with a correct cross-reference table."""
    kids = b" ".join(b"%d 0 R" % (3 + 2 * i) for i in range(len(contents)))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(contents))]
    for i, content in enumerate(contents):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R %s >>" % (4 + 2 * i, _FONT)
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    return pdf_from_objects(path, objects)


def test_pdf_whose_extraction_fails_on_every_page_says_so_not_ocr(tmp_path):
    path = write_pdf(tmp_path / "broken-streams.pdf", [BROKEN] * 3)
    with pytest.raises(DamagedDocument) as caught:
        read_document(path)
    reason = str(caught.value)
    assert "text extraction failed on every page" in reason and "PdfStreamError" in reason and "pp. 1-3" in reason
    assert "scanned" not in reason and "run OCR" not in reason


def test_pdf_with_failed_and_image_only_pages_names_both(tmp_path):
    path = write_pdf(tmp_path / "mixed.pdf", [BROKEN, IMAGE_ONLY, IMAGE_ONLY])
    with pytest.raises(EmptyDocument) as caught:
        read_document(path)
    reason = str(caught.value)
    assert "extraction failed on p. 1 (PdfStreamError" in reason
    assert "the other 2 pages have no text layer, and OCR found no text on them" in reason


def test_pdf_with_one_failing_page_keeps_the_others_and_warns(tmp_path):
    result = read_document(write_pdf(tmp_path / "one-bad.pdf", [READABLE, BROKEN, READABLE, IMAGE_ONLY]))
    assert [bool(p.text) for p in result.pages] == [True, False, True, False]
    assert any(w.startswith("text extraction failed on p. 2 (PdfStreamError: ") for w in result.warnings)
    assert "no text layer nor text found by OCR on 1 of 4 pages: p. 4" in result.warnings


def test_pdf_without_a_text_layer_says_ocr_found_nothing_or_that_it_is_off(tmp_path):
    path = write_pdf(tmp_path / "scan.pdf", [IMAGE_ONLY] * 2)
    with pytest.raises(EmptyDocument, match="no text on any of its 2 pages: no text layer, and OCR found no printed text"):
        read_document(path)
    off = PdfStream(path, ocr=False)  # the caller's choice (the app's setting), not the environment
    pages = list(off.pages())
    assert [p.ocr for p in pages] == [None, None] and not off.tally.pages
    assert any(w.startswith("no text layer (scanned? OCR is off) on 2 of 2 pages") for w in off.warnings)
    with pytest.raises(EmptyDocument, match=r"no text layer \(scanned\?\) on any of its 2 pages: turn OCR on"):
        finish_result(off, pages, path)
    messages = []
    read_stream(0, str(path), None, messages.append, ocr=False)  # as the Ingestor hands it on
    assert "pages: turn OCR on to read scans ([ingest] ocr = true" in messages[-1].error

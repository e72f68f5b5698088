"""Hostile inputs for the reliability suite, built from real bytes: PDFs written object by object,
Word files assembled member by member (the ZIP writer and Word parts of
tests/ingest/test_hostile_readers.py), texts of any size written in slices."""

from __future__ import annotations

import random
import zlib
from pathlib import Path

from tests.ingest.test_hostile_readers import (
    BROKEN,
    _saved_docx,
    _without_core_properties,
    body_xml,
    deflated,
    docx_members,
    repeated,
    write_pdf,
    write_zip,
    zeros_bomb,
)

__all__ = ["BROKEN", "write_pdf", "zeros_bomb", "untitled_docx"]
from tests.pdf_bytes import pdf_from_objects

MB = 1024 * 1024
_FONT = b"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"

# ---------------------------------------------------------------- PDF


def _text_stream(text: bytes, compress: bool = False) -> bytes:
    content = b"BT /F1 12 Tf 72 700 Td (" + text + b") Tj ET"
    if not compress:
        return b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)
    packed = zlib.compress(content, 9)
    return b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(packed), packed)


def looping_pdf(path: Path) -> Path:
    """A page tree whose /Pages node lists itself among its kids, and an outline whose item is its
    own /Next and /Parent: a reader that follows references naively never stops."""
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R %s >>" % _FONT
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R /Outlines 5 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 /Parent 2 0 R >>",
        page,
        _text_stream(b"Lighthouses guide ships past the rocks at night."),
        b"<< /Type /Outlines /First 6 0 R /Last 6 0 R /Count 1 >>",
        b"<< /Title (Loop) /Parent 6 0 R /Next 6 0 R /Prev 6 0 R /First 6 0 R /Dest [3 0 R /Fit] >>",
    ]
    return pdf_from_objects(path, objects)


def many_pages_pdf(path: Path, pages: int) -> Path:
    """A PDF of `pages` pages, each with one short sentence naming its page."""
    return write_pdf(
        path,
        [
            b"BT /F1 12 Tf 72 700 Td (Page %d of the ledger lists harbour fee %d.) Tj ET" % (n, n * 7)
            for n in range(pages)
        ],
    )


def long_line_pdf(path: Path, chars: int) -> Path:
    """One page whose compressed content stream draws a single line of `chars` characters of
    words (no line break): tens of MB of text in a file of tens of kB."""
    words = b"harbour ledger tide lantern rope anchor gull "
    line = (words * (chars // len(words) + 1))[:chars]
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R %s >>" % _FONT
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page]
    return pdf_from_objects(path, [*objects, _text_stream(line, compress=True)])


# ---------------------------------------------------------------- DOCX


def _docx_with_body(path: Path, doctype: bytes, inner: bytes) -> Path:
    head, tail = body_xml(inner)
    declaration, rest = head.split(b"?>", 1)
    xml = declaration + b"?>" + doctype + rest + tail
    return write_zip(path, docx_members(**{"word/document.xml": deflated("word/document.xml", xml)}))


def _paragraph(text: bytes) -> bytes:
    return b"<w:p><w:r><w:t>" + text + b"</w:t></w:r></w:p>"


def billion_laughs_docx(path: Path) -> Path:
    """document.xml declares ten levels of entities, each ten of the one before: 10^9 'lol's."""
    entities = [b'<!ENTITY lol0 "lol">']
    entities += [b'<!ENTITY lol%d "%s">' % (n, b"&lol%d;" % (n - 1) * 10) for n in range(1, 10)]
    doctype = b"<!DOCTYPE w:document [" + b"".join(entities) + b"]>"
    return _docx_with_body(path, doctype, _paragraph(b"&lol9;"))


def xxe_docx(path: Path, secret: Path) -> Path:
    """document.xml declares an external entity naming a local file, and its only text is that
    entity: read safely the file has no text; indexed, it leaked the local file."""
    doctype = b'<!DOCTYPE w:document [<!ENTITY leak SYSTEM "file://%s">]>' % str(secret).encode()
    return _docx_with_body(path, doctype, _paragraph(b"&leak;"))


def _lying(path: Path, chunk: bytes, megabytes: int) -> Path:
    """A Word file whose document.xml is `chunk` repeated to `megabytes` MB, while its directory
    declares a size within every limit (99 times its compressed size, at most 150 MB): only
    counting while inflating can stop it."""
    from dataclasses import replace

    head, _ = body_xml(b"")
    bomb = repeated("word/document.xml", head, chunk, megabytes)
    lie = replace(bomb, size=min(99 * len(bomb.raw), 150 * MB))
    return write_zip(path, docx_members(**{"word/document.xml": lie}))


def paragraph_bomb(path: Path, megabytes: int) -> Path:
    """`megabytes` MB of valid paragraphs ('lol'), declared small."""
    return _lying(path, _paragraph(b"lol") * 28_000, megabytes)


def zeros_bomb_lying(path: Path, megabytes: int) -> Path:
    """`megabytes` MB of zeros after the XML head, declared small: 5,600 MB in about 6 MB."""
    return _lying(path, bytes(MB), megabytes)


def untitled_docx(path: Path) -> Path:
    """A Word file saved without core properties (docProps/core.xml), headed 'Harbour fees 2024'."""
    source = _saved_docx(path.with_name("source-" + path.name), "Harbour fees 2024", "Fees rose in spring.")
    target = _without_core_properties(source, path)
    source.unlink()
    return target


# ---------------------------------------------------------------- text


_WORDS = "the harbour ledger lists fees tides lanterns ropes anchors and gulls for each quay".split()


def big_text(path: Path, megabytes: float) -> Path:
    """Lines of prose with line numbers, `megabytes` MB exactly, written a slice at a time."""
    rng = random.Random(13)
    lines = [" ".join(rng.choice(_WORDS) for _ in range(12)) for _ in range(997)]
    left, number = int(megabytes * MB), 0
    with open(path, "wb") as handle:
        while left > 0:
            chunk = "".join(f"Line {number + i:08d}: {lines[(number + i) % 997]}.\n" for i in range(5000)).encode()
            handle.write(chunk[:left])
            left, number = left - len(chunk), number + 5000
    return path


def run_without_spaces(path: Path, chars: int, needle: str) -> Path:
    """One line of `chars` characters with no space, break or punctuation: hex digits with `needle`
    glued in, then one letter repeated (to a word-piece tokenizer, each half is a single unknown
    word; to tiktoken the second is 8 characters a token)."""
    half = chars // 2
    run = random.Random(7).randbytes(half // 2 + 1).hex()[:half]
    path.write_text(run[: half // 2] + needle + run[half // 2 :] + "a" * (chars - half), encoding="ascii")
    return path


STRAY_BYTE_TEXT = "第一段：显卡驱动版本应当与 CUDA 版本匹配。Grüße aus Köln, café crème.\n"
HEADLESS_HTML = "<html><head><title>Setup</title><meta charset='utf-8'><body><p>Install the harbour driver.</p>"
SVG_HTML = "<html><body><p>Before.</p><svg><path d='M0 0'/><p>After the svg comes the tide table.</p></body>"


def stray_byte_text(path: Path) -> Path:
    """UTF-8 Chinese and German text with one invalid byte in the middle."""
    path.write_bytes(STRAY_BYTE_TEXT.encode() * 20 + b"\xff" + STRAY_BYTE_TEXT.encode() * 20)
    return path

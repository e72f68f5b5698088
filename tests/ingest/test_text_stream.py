"""Text files are decoded, repaired and paged in pieces: the same pages as reading the whole
text at once, in memory a small multiple of the file, and no more text read than is kept."""

from __future__ import annotations

import json
import subprocess
import sys

from ingest.normalize import normalize_text
from ingest.readers import read_document
from ingest.readers import text as text_reader
from ingest.readers.text import TextStream, decode, paginate
from tests.conftest import ROOT

PARAGRAPHS = [
    "The kettle whistles when the water boils on the stove, and the tea is made at once.",
    "潮汐每天涨落两次，这是月球引力作用的结果。\n海水在引力下被拉向月球一侧。",
    "A line with a hyphen-\nated word and    odd   spacing\ton it.",
]


def whole_text_pages(data: bytes) -> list[str]:
    """What reading the whole file at once gives (the reader before it streamed)."""
    return [page.text for page in paginate(normalize_text(decode(data).text))]


def test_streamed_pages_are_the_pages_of_the_whole_text(tmp_path, monkeypatch):
    monkeypatch.setattr(text_reader, "SLICE_BYTES", 1001)  # many pieces from a small file
    monkeypatch.setattr(text_reader, "PIECE_CHARS", 4096)
    text = "\r\n\r\n".join(PARAGRAPHS[i % 3].replace("\n", "\r\n") + f" ({i})" for i in range(2000))
    data = text.encode("utf-8")
    pages = [page.text for page in TextStream(data, "text").pages()]
    assert pages == whole_text_pages(data)
    assert len(pages) > 40


def test_a_cr_lf_split_between_two_slices_stays_one_line_break(monkeypatch):
    monkeypatch.setattr(text_reader, "PIECE_CHARS", 16)
    first = b"first para\r\n\r\nsecond line\r"  # the CR ends the first slice, its LF starts the next
    monkeypatch.setattr(text_reader, "_slices", lambda data, size=0: [data[: len(first)], data[len(first) :]])
    pages = [page.text for page in TextStream(first + b"\nthird line", "text").pages()]
    assert pages == ["first para\n\nsecond line\nthird line"]


def test_reading_stops_soon_after_the_document_limit():
    data = ("\n\n".join(f"Paragraph {i} about tides and kettles." for i in range(200_000))).encode()
    pages = list(TextStream(data, "text", max_chars=100_000).pages())
    kept = sum(len(page.text) for page in pages)
    assert 100_000 < kept < 100_000 + 2 * text_reader.PIECE_CHARS  # the chunker cuts and warns
    assert pages[-1].text.split()[-1] != "kettles." or kept < len(data) // 2


def test_damaged_bytes_are_counted_across_pieces(tmp_path, monkeypatch):
    monkeypatch.setattr(text_reader, "SLICE_BYTES", 1001)
    monkeypatch.setattr(text_reader, "PIECE_CHARS", 4096)
    good = "\n\n".join(f"{PARAGRAPHS[1]} {i}" for i in range(400)).encode("utf-8")
    damaged = good[:10_000] + b"\xff" + good[10_000:30_000] + b"\xfe" + good[30_000:]
    path = tmp_path / "damaged.txt"
    path.write_bytes(damaged)
    result = read_document(path)
    assert result.warnings == decode(damaged).warnings  # as many as decoding all at once finds
    assert result.warnings[0].endswith("replaced by U+FFFD (damaged utf-8 text?)")


def test_markdown_title_comes_from_the_first_heading(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("Intro line\n\n# Kettles and tides\n\nBody text here.", encoding="utf-8")
    assert read_document(path).title == "Kettles and tides"


CHILD = r"""
import json, resource, sys
from pathlib import Path
import charset_normalizer
from ingest.readers import read_document
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = read_document(Path(sys.argv[1]))
growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(json.dumps({"pages": len(result.pages), "growth_mb": growth}))
"""


def test_a_large_text_file_is_read_in_a_small_multiple_of_its_size(tmp_path):
    """40 MB of English and Chinese: the whole-text reader peaked near 15x the file; pieces
    keep it near the bytes plus the pages' own text."""
    path = tmp_path / "big.txt"
    block = "\n\n".join(PARAGRAPHS * 50).encode("utf-8")
    with open(path, "wb") as out:
        while out.tell() < 40 << 20:
            out.write(block + b"\n\n")
    size_mb = path.stat().st_size / 2**20
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout)
    assert outcome["pages"] > 9_000
    print(outcome, f"for {size_mb:.0f} MB")
    assert outcome["growth_mb"] < 5 * size_mb, outcome

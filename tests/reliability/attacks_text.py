"""Attacks on the text path: a huge text file, a small PDF drawing one enormous line, a line
without spaces, texts and pages that readers gave up on, and reasons and titles that were wrong.

The size attacks embed with the stand-in model (tests/reliability/standin.py): they are about
reading, chunking and storing in bounded time and memory, not about the model's speed."""

from __future__ import annotations

from tests.reliability import inputs
from tests.reliability.attacks_files import PASSAGE_CHARS, _failed
from tests.reliability.checks import consistent, page_texts, query
from tests.reliability.harness import Lab, attack, expect

MAX_DOCUMENT_CHARS = 100_000_000  # the chunker keeps this much of one document and warns


def _add_in_time(lab: Lab, paths, limit_s: float):
    library = lab.work / "lib"
    added = lab.docdesk(library, "add", *map(str, paths), timeout=limit_s, model=lab.shared.standin_model())
    expect(added.rc is not None, f"add did not finish in {limit_s:.0f} s (a superlinear chunker?)")
    added.expect_clean(0)
    return {a["path"].rsplit("/", 1)[1]: a for a in added.json["added"]}, library


def _bounded_passages(library) -> int:
    longest = query(library, "SELECT coalesce(max(length(text)), 0) FROM passages")[0][0]
    expect(longest <= PASSAGE_CHARS, f"passages of up to {longest} characters (limit {PASSAGE_CHARS})")
    return longest


@attack(
    "7: 200 MB text file",
    "indexed (cut at 100M characters, with a warning) in bounded time and memory",
    slow=True,
    text_mb=200,
    line_mb=0,
    limit_s=1500,
)
@attack(
    "7: PDF holding a 50 MB line",
    "indexed in bounded time and memory, passages bounded",
    slow=True,
    text_mb=0,
    line_mb=50,
    limit_s=1500,
)
@attack(
    "7: 1 MB text file and a PDF holding a 1 MB line",
    "both indexed in time linear in their size, memory bounded, passages bounded",
    text_mb=1,
    line_mb=1,
    limit_s=240,
)
def huge_text(lab: Lab, text_mb: int, line_mb: int, limit_s: float) -> str:
    paths = [inputs.big_text(lab.work / "log.txt", text_mb)] if text_mb else []
    paths += [inputs.long_line_pdf(lab.work / "line.pdf", line_mb * 2**20)] if line_mb else []
    added, library = _add_in_time(lab, paths, limit_s)
    expect(lab.peak_mb < 800 + 12 * text_mb + 40 * line_mb, f"peak memory {lab.peak_mb:.0f} MB")
    longest = _bounded_passages(library)
    if text_mb * 2**20 > MAX_DOCUMENT_CHARS:
        stored = query(library, "SELECT sum(length(text)) FROM pages")[0][0]
        expect(stored <= MAX_DOCUMENT_CHARS, f"{stored:,} characters stored, over the limit")
        warnings = added["log.txt"]["warnings"]
        cut = f"{stored:,} of {text_mb * 2**20:,} characters stored"
        expect(any("100,000,000 characters" in w for w in warnings), f"{cut}, but add reports no warning: {warnings}")
    consistent(library)
    sizes = {"log.txt": f"{text_mb} MB", "line.pdf": f"{line_mb} MB line in {paths[-1].stat().st_size // 1024} kB"}
    parts = [f"{p.name} ({sizes[p.name]}): {added[p.name]['passages']} passages" for p in paths]
    return f"exit 0; {'; '.join(parts)}; at most {longest} characters a passage"


@attack(
    "8: 30 MB line without spaces",
    "passages of at most ~2,000 characters; a word glued in is still found",
    slow=True,
    chars=30_000_000,
    readers=False,
)
@attack(
    "8: stray byte, HTML without </head>, unclosed <svg>, a 100 kB line without spaces",
    "all indexed with their text: the byte replaced and counted, the body read, the text after the svg kept, "
    "the line cut into passages of at most ~2,000 characters",
    chars=100_000,
    readers=True,
)
def readers_gave_up(lab: Lab, chars: int, readers: bool) -> str:
    paths = [inputs.run_without_spaces(lab.work / "dump.txt", chars, "docdeskneedle")]
    if readers:
        paths += [inputs.stray_byte_text(lab.work / "stray.txt"), lab.work / "setup.html", lab.work / "tides.html"]
        paths[2].write_text(inputs.HEADLESS_HTML, encoding="utf-8")
        paths[3].write_text(inputs.SVG_HTML, encoding="utf-8")
    added, library = _add_in_time(lab, paths, 1500)
    longest = _bounded_passages(library)
    needle = query(library, "SELECT count(*) FROM passages WHERE instr(text, 'docdeskneedle') > 0")[0][0]
    expect(needle >= 1, "the glued word is in no passage")
    observed = f"exit 0: {added['dump.txt']['passages']} passages of at most {longest} characters, the glued word kept"
    return observed + (_readers_kept_text(library, added) if readers else "")


def _readers_kept_text(library, added: dict) -> str:
    texts = page_texts(library)
    expect("显卡驱动版本" in texts.get("stray.txt", "") and "Grüße" in texts["stray.txt"], "stray.txt text lost")
    expect("Install the harbour driver." in texts.get("setup.html", ""), "no body text from setup.html")
    expect("tide table" in texts.get("tides.html", ""), "text after the svg dropped")
    stray = added["stray.txt"]["warnings"]
    expect(any("1 invalid byte" in w for w in stray), f"stray.txt warnings: {stray}")
    return f"; the 3 others indexed with their text ({stray[0][:30]}…)"


@attack(
    "10: PDF whose extraction fails on every page",
    "the reason says text extraction failed (with the error), not 'scanned? run OCR'",
    models=False,
)
def pdf_extraction_error(lab: Lab) -> str:
    path = inputs.write_pdf(lab.work / "broken.pdf", [inputs.BROKEN] * 3)
    added = lab.docdesk(lab.work / "lib", "add", str(path))
    added.expect_clean(1)
    reason = _failed(added).get("broken.pdf", "")
    expect("extraction failed" in reason and "run OCR" not in reason, f"reason: {reason!r}")
    return f"exit 1: {reason[:90]}"


@attack("10: DOCX without core properties", "titled by its first heading, not 'Word Document'")
def docx_title(lab: Lab) -> str:
    path = inputs.untitled_docx(lab.work / "fees.docx")
    added = lab.docdesk(lab.work / "lib", "add", str(path))
    added.expect_clean(0)
    title = added.json["added"][0]["title"]
    expect(title == "Harbour fees 2024", f"titled {title!r}")
    return f"exit 0, titled {title!r}"

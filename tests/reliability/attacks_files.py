"""Attacks with hostile files and names: XML entity tricks and zip bombs in Word files, PDFs with
reference loops, thousands of pages or one enormous line, huge texts, runs without spaces, texts
and pages that readers gave up on, link loops, named pipes, names that are not UTF-8."""

from __future__ import annotations

import os
from pathlib import Path

from tests.reliability import inputs
from tests.reliability.checks import page_texts, query
from tests.reliability.harness import Lab, attack, expect, write_notes

PASSAGE_CHARS = 8 * 256  # the chunker's bound: 8 characters a word piece, 256 pieces


def _failed(run) -> dict[str, str]:
    return {Path(f["path"]).name: f["reason"] for f in run.json["failed"]}


@attack(
    "billion-laughs and XXE DOCX",
    "entities are never expanded nor files read through them: refused or read without them, memory small",
    models=False,
)
def docx_entities(lab: Lab) -> str:
    secret = lab.work / "secret.txt"
    secret.write_text("TOPSECRET-4711", encoding="utf-8")
    laughs = inputs.billion_laughs_docx(lab.work / "laughs.docx")
    xxe = inputs.xxe_docx(lab.work / "xxe.docx", secret)
    library = lab.work / "lib"
    added = lab.docdesk(library, "add", str(laughs), str(xxe), timeout=120)
    added.expect_clean({0, 1})
    failed = _failed(added)
    expect("laughs.docx" in failed, "the billion-laughs file was indexed")
    leaked = [name for name, text in page_texts(library).items() if "TOPSECRET" in text] if library.exists() else []
    expect(not leaked, f"a local file's content entered the library through {leaked}")
    expect(lab.peak_mb < 400 and lab.seconds < 60, f"{lab.peak_mb:.0f} MB, {lab.seconds:.0f} s")
    return f"exit {added.rc}; laughs: {failed['laughs.docx'][:60]}…; xxe: {failed.get('xxe.docx', 'read, no leak')}"


@attack(
    "PDF with reference loops",
    "a page tree and an outline that lead back to themselves end quickly with a reason",
    models=False,
)
def pdf_reference_loop(lab: Lab) -> str:
    path = inputs.looping_pdf(lab.work / "loop.pdf")
    added = lab.docdesk(lab.work / "lib", "add", str(path), timeout=120)
    added.expect_clean({0, 1})
    expect(lab.seconds < 60, f"{lab.seconds:.0f} s")
    reason = _failed(added).get("loop.pdf", "indexed")
    return f"exit {added.rc} in {lab.seconds:.1f} s: {reason}"


@attack("5,000-page PDF", "indexed with every page, memory bounded", slow=True, pages=5000)
@attack("many-page PDF (300 pages)", "indexed with every page, memory bounded", pages=300)
def many_pages(lab: Lab, pages: int) -> str:
    path = inputs.many_pages_pdf(lab.work / "ledger.pdf", pages)
    added = lab.docdesk(lab.work / "lib", "add", str(path))
    added.expect_clean(0)
    entry = added.json["added"][0]
    expect(entry["pages"] == pages, f"{entry['pages']} pages of {pages}")
    expect(lab.peak_mb < 1500, f"peak memory {lab.peak_mb:.0f} MB")
    return f"exit 0: {pages} pages, {entry['passages']} passages"


@attack(
    "symlink loop",
    "a link to itself given by path says 'loop of symbolic links' (exit 1); a folder with a looping link ends",
    models=False,
)
def symlink_loop(lab: Lab) -> str:
    loop = lab.work / "loop.txt"
    loop.symlink_to(loop)
    folder = lab.work / "folder"
    folder.mkdir()
    (folder / "again").symlink_to(folder)  # a folder that holds itself
    (folder / "self.md").symlink_to(folder / "self.md")
    added = lab.docdesk(lab.work / "lib", "add", str(loop), str(folder), timeout=120)
    added.expect_clean(1)
    reason = _failed(added).get("loop.txt", "")
    expect("loop of symbolic links" in reason, f"reason: {reason!r}")
    return f"exit 1: {reason}"


@attack(
    "FIFO", "a named pipe given by path says so (exit 1); one inside a folder is passed over; no hang", models=False
)
def fifo(lab: Lab) -> str:
    pipe = lab.work / "pipe.txt"
    os.mkfifo(pipe)
    folder = lab.work / "folder"
    folder.mkdir()
    os.mkfifo(folder / "inner.md")
    added = lab.docdesk(lab.work / "lib", "add", str(pipe), str(folder), timeout=120)
    added.expect_clean(1)
    reason = _failed(added).get("pipe.txt", "")
    expect("named pipe" in reason, f"reason: {reason!r}")
    return f"exit 1: {reason}"


@attack(
    "5: file name that is not UTF-8",
    "that file is reported ('rename the file'), the rest added, by add and by sync (exit 1, no traceback)",
)
def name_not_utf8(lab: Lab) -> str:
    library = lab.library()
    docs = write_notes(lab.work / "docs", ["tides.md"])
    (docs / os.fsdecode(b"caf\xe9 menu.txt")).write_text("Espresso until noon.", encoding="utf-8")
    reasons = []
    for command in (["add", str(docs)], ["sync"]):
        run = lab.docdesk(library, *command)
        run.expect_clean(1)
        failed = run.json["failed"]
        expect(len(failed) == 1 and "not valid UTF-8" in failed[0]["reason"], f"{command[0]} failed: {failed}")
        reasons.append(failed[0]["reason"])
    names = {Path(r[0]).name for r in query(library, "SELECT path FROM files")}
    expect("tides.md" in names, "the good file was not added")
    return f"add and sync exit 1: {reasons[0][:60]}…"


@attack(
    "6: DOCX zip bomb, 6 MB",
    "refused as a zip bomb while inflating, in bounded memory and seconds",
    slow=True,
    models=False,
    megabytes=5600,
)
@attack(
    "6: DOCX zip bombs, small",
    "refused as zip bombs (by the directory, and while inflating), in bounded memory and seconds",
    models=False,
    megabytes=0,
)
def docx_bombs(lab: Lab, megabytes: int) -> str:
    if megabytes:
        paths = [inputs.zeros_bomb_lying(lab.work / "bomb.docx", megabytes)]
    else:
        paths = [inputs.zeros_bomb(lab.work / "zeros.docx"), inputs.paragraph_bomb(lab.work / "liar.docx", 100)]
    added = lab.docdesk(lab.work / "lib", "add", *map(str, paths), timeout=300)
    added.expect_clean(1)
    failed = _failed(added)
    for path in paths:
        expect("(a zip bomb?)" in failed.get(path.name, ""), f"{path.name}: {failed.get(path.name, 'indexed')}")
    expect(lab.peak_mb < 400 and lab.seconds < 60, f"{lab.peak_mb:.0f} MB, {lab.seconds:.0f} s")
    sizes = ", ".join(f"{p.stat().st_size / 2**20:.1f} MB" for p in paths)
    return f"exit 1 ({sizes} {'file' if len(paths) == 1 else 'files'}): {next(iter(failed.values()))[:70]}…"

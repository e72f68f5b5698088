"""Attacks of issue 32 on the ingest side: small files that declare huge work (images of giant
declared size, thousands of frames, sheets whose rows never end, ODS repeats, an EPUB spine
that repeats, CSVs with a huge field or a million columns), text lost in tall images, odd image
sizes and sample formats, the reader process killed or interrupted, and renames in a watched
folder. Each hostile file goes into a fresh library beside a canary note that must be indexed;
time and peak memory are the `docdesk` processes' own (the CLI and its reader process)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.ingest.test_crash import _children
from tests.reliability import inputs_declared as build
from tests.reliability.checks import consistent, page_texts
from tests.reliability.harness import NOTES, Lab, attack, expect

PEAK_MB = 2000  # the bound for every attack


def _with_canary(lab: Lab, *hostile: Path, limit_s: float = 600, standin: bool = True) -> tuple[dict, dict, Path]:
    """`docdesk add` of the hostile files beside a canary note in a fresh library: (added, failed)
    by file name, and the library. The canary must be indexed, memory stay under PEAK_MB."""
    canary = lab.work / "canary.md"
    canary.write_text(NOTES["kettle.md"], encoding="utf-8")
    library = lab.work / "lib"
    model = lab.shared.standin_model() if standin else None
    run = lab.docdesk(library, "add", str(canary), *map(str, hostile), timeout=limit_s, model=model)
    expect(run.rc is not None, f"add did not finish in {limit_s:.0f} s")
    run.expect_clean({0, 1})
    added = {Path(a["path"]).name: a for a in run.json["added"]}
    failed = {Path(f["path"]).name: f["reason"] for f in run.json["failed"]}
    expect("canary.md" in added, f"the canary was not indexed: {failed.get('canary.md', 'missing')}")
    expect(lab.peak_mb < PEAK_MB, f"peak memory {lab.peak_mb:.0f} MB")
    consistent(library)
    return added, failed, library


def _said(added: dict, failed: dict, name: str) -> str:
    if name in failed:
        return failed[name]
    return "; ".join(added[name]["warnings"]) if name in added else "missing"


# ---------------------------------------------------------------- images


@attack(
    "32: images declaring huge sizes (38-byte WebP of 16,383², RGBA PNGs of 12,000² and 10,000²)",
    "refused with their size before decoding, or decoded reduced in bounded memory; canary indexed",
    models=False,
)
def giant_images(lab: Lab) -> str:
    webp = build.lossless_webp(lab.work / "bomb.webp")
    over = build.streamed_png(lab.work / "over.png", 12_000, 12_000)
    under = build.streamed_png(lab.work / "under.png", 10_000, 10_000)
    added, failed, _ = _with_canary(lab, webp, over, under, limit_s=120)
    expect("too large" in failed.get("bomb.webp", ""), f"bomb.webp: {_said(added, failed, 'bomb.webp')}")
    expect("549 MB decoded" in failed.get("over.png", ""), f"over.png: {_said(added, failed, 'over.png')}")
    expect("no text found" in failed.get("under.png", ""), f"under.png: {_said(added, failed, 'under.png')}")
    expect(lab.seconds < 90, f"{lab.seconds:.0f} s")
    return f"webp ({webp.stat().st_size} B): {failed['bomb.webp'][:50]}…; over.png: …{failed['over.png'][40:110]}…; under.png decoded, blank"


@attack(
    "32: TIFF of 20,000 frames of 64×64 (2.3 MB)",
    "at most 300 frames read, the cap named; canary indexed",
    slow=True,
    frames=20_000,
)
@attack("32: TIFF of 2,000 frames of 64×64", "at most 300 frames read, the cap named; canary indexed", frames=2_000)
def many_frames(lab: Lab, frames: int) -> str:
    tiff = build.many_frame_tiff(lab.work / "frames.tif", frames)
    added, failed, _ = _with_canary(lab, tiff, limit_s=300)
    said = _said(added, failed, "frames.tif")
    expect(f"only the first 300 of its {frames:,} frames were read" in said, f"frames.tif: {said[:200]}")
    return f"{tiff.stat().st_size / 2**20:.1f} MB: {said[-120:]}"


@attack(
    "32: G4 TIFF of 300 frames of 12,000² and an animated WebP of 200 frames of 4,000²",
    "frames decoded only within the file's pixel budget, the cap named; memory bounded; canary indexed",
    slow=True,
    frames=300,
    side=12_000,
    webp_frames=200,
    webp_side=4_000,
)
@attack(
    "32: G4 TIFF of 30 frames of 6,000² and an animated WebP of 12 frames of 6,000²",
    "frames decoded only within the file's pixel budget, the cap named; memory bounded; canary indexed",
    frames=30,
    side=6_000,
    webp_frames=12,
    webp_side=6_000,
)
def declared_frames(lab: Lab, frames: int, side: int, webp_frames: int, webp_side: int) -> str:
    tiff = build.many_frame_tiff(lab.work / "g4.tif", frames, side, g4=True)
    webp = build.animated_webp(lab.work / "anim.webp", webp_frames, webp_side)
    added, failed, _ = _with_canary(lab, tiff, webp, limit_s=600)
    for name in ("g4.tif", "anim.webp"):
        said = _said(added, failed, name)
        expect("were not read: they declare more pixels" in said, f"{name}: {said[:200]}")
    return (
        f"g4.tif ({tiff.stat().st_size // 1024} KB): …{_said(added, failed, 'g4.tif')[-150:]}; "
        f"anim.webp ({webp.stat().st_size} B) likewise"
    )


@attack(
    "32: tall screenshot 640×14,400 beside its 640×3,840 control",
    "read in tiles at full scale: 'quick brown' found on as large a share of lines as in the control",
    slow=True,
    copies=30,
    control_copies=8,
)
@attack(
    "32: tall screenshot 640×9,600 beside its 640×1,920 control",
    "read in tiles at full scale: 'quick brown' found on as large a share of lines as in the control",
    copies=20,
    control_copies=4,
)
def tall_screenshot(lab: Lab, copies: int, control_copies: int) -> str:
    tall = build.stacked_pages(lab.work / "tall.png", copies)
    control = build.stacked_pages(lab.work / "control.png", control_copies)
    added, failed, library = _with_canary(lab, tall, control, limit_s=900, standin=False)
    texts = page_texts(library)
    found = {name: texts.get(name, "").count("quick brown") for name in ("tall.png", "control.png")}
    lines = {"tall.png": copies * build.lines_per_page(), "control.png": control_copies * build.lines_per_page()}
    share = {name: found[name] / lines[name] for name in found}
    expect(share["control.png"] > 0.9, f"the control finds {found['control.png']} of {lines['control.png']}")
    expect(share["tall.png"] >= share["control.png"] - 0.05, f"tall {found['tall.png']}/{lines['tall.png']}")
    return (
        f"'quick brown' {found['tall.png']}/{lines['tall.png']} lines in the tall image, "
        f"{found['control.png']}/{lines['control.png']} in the control"
    )


@attack(
    "32: 1×1, 1×60000 and 60000×1 PNGs; 16-bit and float32 TIFFs of a printed page",
    "the PNGs refused as too small or too thin; the TIFFs normalised and their text read",
    models=True,
)
def odd_images(lab: Lab) -> str:
    thin = build.thin_pngs(lab.work / "thin")
    floats = build.float_tiff(lab.work / "float.tif")
    sixteen = build.sixteen_bit_tiff(lab.work / "u16.tif")
    added, failed, library = _with_canary(lab, *thin, floats, sixteen, limit_s=600, standin=False)
    expect("too small" in failed.get("dot.png", ""), f"dot.png: {_said(added, failed, 'dot.png')}")
    for name in ("column.png", "row.png"):
        expect("too thin" in failed.get(name, ""), f"{name}: {_said(added, failed, name)}")
    texts = page_texts(library)
    for name in ("float.tif", "u16.tif"):
        expect("quick brown" in texts.get(name, ""), f"{name}: {_said(added, failed, name)[:120]}")
    return f"dot: {failed['dot.png'][22:90]}…; column: …{failed['column.png'][44:80]}…; float and 16-bit TIFFs read"


# ---------------------------------------------------------------- sheets, ODS, EPUB, CSV


@attack(
    "32: XLSX of 20,000 rows with a cell in A and XFD, and one whose row is r=10¹²",
    "read sparse in seconds; rows past 1,048,576 left out with a warning; canary indexed",
    rows=20_000,
)
@attack(
    "32: XLSX of 1,048,576 rows with a cell in A and XFD",
    "read sparse in bounded time; canary indexed",
    slow=True,
    rows=1_048_576,
)
def endless_sheets(lab: Lab, rows: int) -> str:
    wide = build.a_and_xfd_xlsx(lab.work / "wide.xlsx", rows)
    far = build.far_row_xlsx(lab.work / "far.xlsx")
    started = time.perf_counter()
    added, failed, library = _with_canary(lab, wide, far, limit_s=1800)
    expect(
        "rows numbered past 1,048,576" in _said(added, failed, "far.xlsx"), f"far: {_said(added, failed, 'far.xlsx')}"
    )
    text = page_texts(library).get("wide.xlsx", "")
    expect("XFD:" in text, f"wide.xlsx: {_said(added, failed, 'wide.xlsx')[:120]}")
    return f"wide.xlsx ({wide.stat().st_size // 1024} KB) and far.xlsx indexed in {time.perf_counter() - started:.0f} s"


@attack(
    "32: ODS of 1 and 150 rows repeated 10⁹ times with cells repeated 10⁹ times (< 1 KB)",
    "repeats capped and the text cut at the file's budget with a warning, in seconds; canary indexed",
)
def ods_repeats(lab: Lab) -> str:
    one = build.repeated_ods(lab.work / "one.ods")
    many = build.repeated_ods(lab.work / "many.ods", rows=150)
    added, failed, _ = _with_canary(lab, one, many, limit_s=600)
    for name in ("one.ods", "many.ods"):
        said = _said(added, failed, name)
        expect("text cut at 2,000,000 characters" in said, f"{name}: {said[:200]}")
    expect(lab.seconds < 300, f"{lab.seconds:.0f} s")
    return f"{one.stat().st_size} B and {many.stat().st_size} B: {_said(added, failed, 'many.ods')[-170:]}"


@attack(
    "32: EPUB whose spine lists one chapter 10,000 times (1.5 KB)",
    "each chapter read once, with a warning; canary indexed",
)
def epub_spine(lab: Lab) -> str:
    book = build.spine_epub(lab.work / "again.epub")
    added, failed, _ = _with_canary(lab, book, limit_s=300)
    said = _said(added, failed, "again.epub")
    expect("each is read once" in said, f"again.epub: {said[:200]}")
    expect(added["again.epub"]["passages"] < 50, f"{added['again.epub']['passages']} passages")
    return f"{book.stat().st_size} B: {added['again.epub']['passages']} passages; {said}"


@attack(
    "32: CSV with one 100 MB field, and a CSV of 20 rows × 1M columns",
    "the field cut with a warning, the table kept; the wide file read in bounded time; canary indexed",
    slow=True,
    field_mb=100,
    columns=1_000_000,
)
@attack(
    "32: CSV with one 5 MB field, and a CSV of 20 rows × 100,000 columns",
    "the field cut with a warning, the table kept; the wide file read in bounded time; canary indexed",
    field_mb=5,
    columns=100_000,
)
def csv_shapes(lab: Lab, field_mb: int, columns: int) -> str:
    field = build.huge_field_csv(lab.work / "field.csv", field_mb)
    wide = build.wide_csv(lab.work / "wide.csv", 20, columns)
    added, failed, _ = _with_canary(lab, field, wide, limit_s=1800)
    said = _said(added, failed, "field.csv")
    expect(added.get("field.csv", {}).get("passages", 0) < 100, f"field.csv: {said[:160]}")
    expect("is cut there" in said, f"field.csv: {said[:160]}")
    wide_said = _said(added, failed, "wide.csv")
    expect("cells right of column XFD are left out" in wide_said, f"wide.csv: {wide_said[:160]}")
    return (
        f"field.csv ({field.stat().st_size / 2**20:.0f} MB): {said}; wide.csv ({wide.stat().st_size / 2**20:.0f} MB): "
        f"{added['wide.csv']['passages']} passages, {wide_said}"
    )


# ---------------------------------------------------------------- the reader process, renames


def _reader_pid(cli: int, timeout: float = 60) -> int:
    """The CLI's reader process (multiprocessing's spawned child), once it runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in _children(cli):
            if b"spawn_main" in _cmdline(child):
                return child
        time.sleep(0.2)
    raise AssertionError("no reader process started")


def _wait_for_ocr(reader: int, timeout: float = 180) -> None:
    """Until the reader process holds the OCR models (over 250 MB resident): the long read has begun."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            status = Path(f"/proc/{reader}/status").read_text()
        except OSError as exc:
            raise AssertionError("the reader process ended before OCR began") from exc
        rss_kb = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
        if rss_kb > 250 * 1024:
            break
        expect(time.monotonic() < deadline, "OCR never started")
        time.sleep(0.2)
    time.sleep(1)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@attack(
    "32: the reader process killed, and Ctrl-C, during a long OCR",
    "one line each, no multiprocessing traceback; the library consistent",
    models=True,
)
def reader_stopped(lab: Lab) -> str:
    tall = build.stacked_pages(lab.work / "tall.png", 30)
    library = lab.work / "lib"
    killed = lab.start(library, "add", str(tall))
    os.kill(_reader_pid(killed.cli_pid()), signal.SIGKILL)
    after_kill = killed.finish(120)
    after_kill.expect_clean(1)
    reason = after_kill.json["failed"][0]["reason"]
    expect("stopped by SIGKILL" in reason, reason)
    interrupted = lab.start(library, "add", str(tall))
    reader = _reader_pid(interrupted.cli_pid())
    _wait_for_ocr(reader)
    for pid in (interrupted.cli_pid(), reader):  # what a terminal's Ctrl-C does: its foreground processes
        os.kill(pid, signal.SIGINT)
    after_int = interrupted.finish(60)
    expect("Traceback" not in after_int.stderr, f"traceback on Ctrl-C: {after_int.stderr[-300:]}")
    lines = [line for line in after_int.stderr.splitlines() if line.strip()]
    expect(after_int.rc == 130 and "interrupted" in lines[-1], f"Ctrl-C: exit {after_int.rc}, {lines[-2:]}")
    consistent(library)
    return f"kill -9: {reason[:80]}; Ctrl-C during OCR: exit {after_int.rc}, '{lines[-1][:60]}…'"


@attack(
    "32: files renamed and moved in a watched folder, then sync",
    "each moved path is linked to its document, nothing read or embedded again; OCR kept",
    models=True,
)
def renames(lab: Lab) -> str:
    folder = lab.work / "watched"
    (folder / "sub").mkdir(parents=True)
    page = build.printed_page()
    page.save(folder / "scan.png")
    (folder / "kettle.md").write_text(NOTES["kettle.md"], encoding="utf-8")
    library = lab.work / "lib"
    first = lab.docdesk(library, "add", str(folder))
    first.expect_clean(0)
    (folder / "scan.png").rename(folder / "sub" / "scan-moved.png")
    (folder / "kettle.md").rename(folder / "kettle-renamed.md")
    synced = lab.docdesk(library, "sync")
    synced.expect_clean(0)
    reasons = {Path(s["path"]).name: s["reason"] for s in synced.json["skipped"]}
    expect(synced.json["added"] == [] and synced.json["removed"] == [], f"sync: {synced.json}")
    for name in ("scan-moved.png", "kettle-renamed.md"):
        expect("not read again" in reasons.get(name, ""), f"{name}: {reasons.get(name)}")
    expect(synced.seconds < first.seconds, f"sync {synced.seconds:.0f} s, first add {first.seconds:.0f} s")
    return f"add {first.seconds:.1f} s (OCR), sync after the moves {synced.seconds:.1f} s: {reasons['scan-moved.png'][:60]}"

"""Attacks on what a model file and a second DocDesk bring (issue 39): chat templates that loop
or write gigabytes, GGUF headers built to exhaust or crash the reader, a re-embed that meets a
full disk, and a second DocDesk whose setting names the embedding model the library left. Each
builds its input for real (GGUFs written byte by byte or with the synthetic writer, a real tmpfs,
two real processes) and runs the `docdesk` command line; the library is checked after each."""

from __future__ import annotations

import math
import sqlite3
import struct
import time
from pathlib import Path

from tests.app.test_exit_codes import fill
from tests.engine.test_gguf_hostile import ARR, F32, F64, STR, U32, gguf, kv, model, nested, s, tensor
from tests.reliability.harness import NOTES, Lab, attack, documents, expect, integrity

LOOP = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"


def _tiny(lab: Lab, name: str, shape: str, template: str) -> Path:
    """A few-MB GGUF of random weights (the bundled model's vocabulary) with `template`."""
    from engine.backends.llama_cpp import bundled_model_path
    from tests.bench.synthetic_gguf import SHAPES, write

    return write(lab.work / name, SHAPES[shape], bundled_model_path(), chat_template=template)


def _config_model(lab: Lab) -> str | None:
    import tomllib

    config = lab.work / "no-config.toml"
    return tomllib.loads(config.read_text()).get("llm", {}).get("model") if config.exists() else None


@attack(
    "39: chat templates that loop or write gigabytes",
    "models use: a looping or exploding template is stopped within its 2 s budget; with a family "
    "(qwen2) its standard template stands in with a warning and ask answers; without one "
    "(llama) refused in one line, exit 2, the setting unchanged; memory < 2 GB",
)
def hostile_templates(lab: Lab) -> str:
    library = lab.library()
    seen = []
    for label, template in {
        "10^10 loop": LOOP + "<|im_start|>",
        "'a' * 3e9": "{{ 'a' * 3000000000 }}<|im_start|>",
        "tojson(indent=1e8)": "{{ messages|tojson(indent=100000000) }}<|im_start|>",
    }.items():
        gguf_file = _tiny(lab, f"qwen2-{len(seen)}.gguf", "qwen2-tiny", template)
        used = lab.docdesk(library, "models", "use", str(gguf_file), timeout=60)
        used.expect_clean(0)
        expect("standard chatml template" in used.stderr, f"{label}: no warning: {used.stderr[-200:]}")
        expect(used.seconds < 15, f"{label}: models use took {used.seconds:.1f} s")
        seen.append(f"{label} {used.seconds:.1f} s")
    asked = lab.docdesk(library, "ask", "When do tides rise?", "--backend", "llama_cpp", "--model", str(gguf_file))
    asked.expect_clean(0)
    expect(asked.seconds < 120, f"ask took {asked.seconds:.0f} s")
    before = _config_model(lab)
    hopeless = _tiny(lab, "llama-loop.gguf", "llama-tiny", LOOP)
    refused = lab.docdesk(library, "models", "use", str(hopeless), timeout=60)
    refused.expect_clean(2)
    expect("knows no standard template" in refused.error, f"reason: {refused.error[:160]}")
    expect(_config_model(lab) == before, "the refused model was saved")
    expect(lab.peak_mb < 2048, f"peak {lab.peak_mb:.0f} MB")
    expect(integrity(library) == "ok", "the library is damaged")
    return f"fallback with a warning ({', '.join(seen)}); ask exit 0 in {asked.seconds:.0f} s; llama: exit 2 in {refused.seconds:.1f} s"


HEADERS = {
    "arrays nested 3,000 deep": model([kv("deep", ARR, nested(3000))]),
    "an array of 2^61": model([kv("huge", ARR, struct.pack("<IQ", U32, 1 << 61))]),
    "alignment 0.5": model([kv("general.alignment", F32, struct.pack("<f", 0.5))]),
    "alignment a string": model([kv("general.alignment", STR, s("32"))]),
    "block_count a string": model(block_count=bytes([STR]) + s("sixty")),
    "head_count NaN": model(**{"attention.head_count": bytes([F32]) + struct.pack("<f", math.nan)}),
    "context inf": model(context_length=bytes([F64]) + struct.pack("<d", math.inf)),
    "4M tensors": gguf([], count=4_000_000),
    "no tensors": gguf([kv("general.architecture", STR, s("llama")), kv("llama.block_count", U32, b"\2\0\0\0")]),
    "5 dimensions": gguf([kv("general.architecture", STR, s("llama"))], [tensor("t", [1] * 5)]),
}


@attack(
    "39: GGUF headers built to break the reader",
    "models use: each refused in one line ('damaged GGUF … key' or 'not a model'), exit 2, under 2 s, "
    "no traceback, the setting unchanged",
    models=False,
)
def hostile_headers(lab: Lab) -> str:
    library = lab.library()
    slowest = 0.0
    for label, raw in HEADERS.items():
        path = lab.work / f"{label.replace(' ', '-')}.gguf"
        path.write_bytes(raw)
        used = lab.docdesk(library, "models", "use", str(path), timeout=60)
        used.expect_clean(2)
        expect("damaged GGUF" in used.error or "not a model" in used.error, f"{label}: {used.error[:160]}")
        slowest = max(slowest, used.seconds)
    expect(slowest < 2.0, f"slowest {slowest:.1f} s")
    expect(_config_model(lab) is None, "a refused model was saved")
    return f"{len(HEADERS)} headers refused with exit 2, the slowest run {slowest:.1f} s"


def _embedded_with(library: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{library / 'library.sqlite'}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT embed_model, count(*) FROM documents GROUP BY embed_model").fetchall()
    return {Path(name).name or name: count for name, count in rows}


@attack(
    "39: re-embedding on a full disk",
    "search with another embedding model on a library whose disk is full: exit 0 with hits (what is "
    "embedded, and keywords), the stop said once; the next search does not spend the re-embed again",
)
def reembed_on_full_disk(lab: Lab) -> str:
    library = lab.tmpfs("full", "8m")
    notes = lab.work / "notes"
    notes.mkdir()
    for n in range(60):  # 60 documents embedded with the stand-in model, quickly
        (notes / f"quay-{n}.md").write_text(
            f"# Quay {n}\n\n" + " ".join(f"Quay {n} pays its harbour fee {k} at every tide." for k in range(40)),
            encoding="utf-8",
        )
    lab.docdesk(library, "add", str(notes), model=lab.shared.standin_model()).expect_clean(0)
    fill(library, leave=96 * 1024)  # room to open and write a little: the re-embed runs out mid-way
    first = lab.docdesk(library, "search", "Which quay pays its fee at every tide?")  # the default model
    first.expect_clean(0)
    expect(first.json.get("results"), f"no hits: {first.stdout[:200]}")
    stopped = "re-embedding stopped" in first.stderr
    expect(stopped or "read-only" in first.stderr, f"not said: {first.stderr[-300:]}")
    second = lab.docdesk(library, "search", "Quay 7 harbour fee")
    second.expect_clean(0)
    expect(second.json.get("results"), "the second search found nothing")
    expect(integrity(library) == "ok", "the library is damaged")
    left = _embedded_with(library)
    how = "re-embed stopped by the full disk" if stopped else "opened read-only"
    return f"{how}; search exit 0 with hits twice ({first.seconds:.1f} s, {second.seconds:.1f} s); embedded: {left}"


@attack(
    "39: a second DocDesk with the embedding model the library left",
    "after one DocDesk converts the library to another model, one still set to the old model searches "
    "it (exit 0) and never converts it back; its add is refused in one line (exit 2); no ping-pong",
)
def embedder_ping_pong(lab: Lab) -> str:
    library = lab.library()
    other = lab.shared.standin_model()
    converted = lab.docdesk(library, "search", "When do tides rise?", model=other)
    converted.expect_clean(0)
    after = _embedded_with(library)
    expect(after == {other.name: len(NOTES)}, f"not converted: {after}")
    started = time.perf_counter()
    old = lab.docdesk(library, "search", "When do tides rise?")  # the default model: the one it left
    old.expect_clean(0)
    expect(old.json.get("results"), "the old-model search found nothing")
    expect(_embedded_with(library) == after, f"converted back: {_embedded_with(library)}")
    extra = lab.work / "cats.txt"
    extra.write_text("Cats sleep beside warm fireplaces.", encoding="utf-8")
    added = lab.docdesk(library, "add", str(extra))
    added.expect_clean(2)
    expect("does not convert it back" in added.error, f"reason: {added.error[:160]}")
    expect(_embedded_with(library) == after and integrity(library) == "ok", "the library changed")
    return (
        f"converted to the stand-in; the old-model search exit 0 in {time.perf_counter() - started:.1f} s, "
        f"nothing converted back; its add exit 2"
    )


@attack(
    "39: ODS of another shape, a row repeated 10⁹ times under long headers, with the real embedder",
    "indexed in bounded time with the text cut at its budget (a warning): each distinct passage "
    "embedded once, so 2,000 repeated passages cost a handful of encodings; the library intact",
)
def ods_other_shape(lab: Lab) -> str:
    from tests.reliability.attacks_declared import _said, _with_canary
    from tests.reliability.inputs_declared import header_ods

    files = [header_ods(lab.work / f"headers-{n}.ods", n) for n in (10, 1000)]
    added, failed, library = _with_canary(lab, *files, limit_s=600, standin=False)  # the default model
    for path in files:
        expect(path.name in added, f"{path.name}: {failed.get(path.name)}")
        expect("text cut at 2,000,000 characters" in _said(added, failed, path.name), f"{path.name}: no cut warning")
    expect(lab.seconds < 180, f"add took {lab.seconds:.0f} s")
    passages = {Path(d["path"]).name: d["passages"] for d in documents(lab, library)}
    return f"2 files of ~{files[0].stat().st_size} B indexed in {lab.seconds:.0f} s with the default model; passages {passages}"

"""Attacks with processes: kill -9 during add, adds racing each other and list, search and remove,
a file rewritten while it is added, documents left queued by a kill whose files are then deleted."""

from __future__ import annotations

import hashlib
import multiprocessing
import random
import time

from tests.ingest.test_changing_file import VERSIONS, _keep_rewriting
from tests.reliability.checks import (
    _indexed,
    cache_matches,
    consistent,
    kill_9,
    numbered_notes,
    query,
    statuses,
    wait_for,
)
from tests.reliability.harness import NOTES, Lab, attack, expect


@attack(
    "kill -9 during add, 13 trials",
    "each kill leaves a consistent library that keeps every finished document; the next add resumes, each file once",
    slow=True,
    trials=13,
    files=40,
    sentences=50,
)
@attack(
    "kill -9 during add",
    "the killed add leaves a consistent library that keeps every finished document; the next add resumes, each file once",
    trials=1,
    files=8,
    sentences=1,
)
def kill_during_add(lab: Lab, trials: int, files: int, sentences: int) -> str:
    notes = numbered_notes(lab.work / "notes", files, sentences=sentences)  # 50 sentences: about 1 s to embed
    library, rng = lab.work / "lib", random.Random(13)
    db = library / "library.sqlite"
    kept = []
    for trial in range(trials):
        before = _indexed(db)
        add = lab.start(library, "add", str(notes))
        target = before + 1 + trial % 3  # kill after 1, 2 or 3 more documents
        wait_for(lambda t=target: _indexed(db) >= t, 300, "document indexed", add)
        if trial % 2:
            time.sleep(rng.uniform(0, 0.3))  # another moment of the write
        kill_9(add)
        consistent(library)
        kept.append(_indexed(db))
        expect(kept[-1] >= before, f"trial {trial + 1}: {before} documents were indexed, {kept[-1]} after the kill")
    final = lab.docdesk(library, "add", str(notes))
    final.expect_clean(0)
    state = consistent(library)
    expect(statuses(library) == {"indexed": files}, f"after the resumed add: {state}, {files} files")
    cache_matches(library)
    return f"{trials} kill(s), indexed after each: {kept}; resumed add exit 0: {state}, vector cache exact"


@attack(
    "two adds at once",
    "two `add` processes on one library both finish; every document indexed once, the cache exact",
)
def two_adds_at_once(lab: Lab) -> str:
    library = lab.library()
    first, second = numbered_notes(lab.work / "a", 3, "harbour"), numbered_notes(lab.work / "b", 3, "lantern")
    adds = [lab.start(library, "add", str(first)), lab.start(library, "add", str(second))]
    runs = [add.finish() for add in adds]
    for run in runs:
        run.expect_clean(0)
    state = consistent(library)
    expect(statuses(library) == {"indexed": 6 + len(NOTES)}, f"after both adds: {state}")
    return f"both exit 0 ({runs[0].seconds:.0f} s, {runs[1].seconds:.0f} s); {state}; cache exact ({cache_matches(library)})"


@attack(
    "list, search and remove beside add",
    "list and search answer while add writes (exit 0, valid JSON, counts never go back), a remove takes "
    "effect; add finishes and nothing else is lost",
)
def readers_beside_add(lab: Lab) -> str:
    library = lab.library()
    bees = next(d for d in _documents(lab, library) if d["path"].endswith("bees.md"))
    notes = numbered_notes(lab.work / "notes", 5)
    add = lab.start(library, "add", str(notes))
    search = lab.start(library, "search", "when", "does", "the", "kettle", "whistle")
    wait_for(lambda: statuses(library).get("queued", 0) > 0, 120, "queued document", add)
    lab.docdesk(library, "remove", bees["doc_id"]).expect_clean(0)
    counts = []
    while add.alive() or not counts:
        listed = lab.docdesk(library, "list")
        listed.expect_clean(0)
        counts.append(sum(d["status"] == "indexed" for d in listed.json["documents"]))
        expect(counts == sorted(counts), f"indexed counts went back: {counts}")
        time.sleep(1.5)  # a loop, not a load test: leave the add its share of two cores
    add.finish().expect_clean(0)
    found = search.finish()
    found.expect_clean(0)
    expect(found.json["results"][0]["path"].endswith("kettle.md"), "search during add did not find the kettle")
    names = {d["path"].rsplit("/", 1)[1] for d in _documents(lab, library) if d["status"] == "indexed"}
    expected = (set(NOTES) - {"bees.md"}) | {p.name for p in notes.iterdir()}
    expect(names == expected, f"indexed after: {sorted(names)}")
    state = consistent(library)
    cache_matches(library)
    return (
        f"remove exit 0 and {len(counts)} lists during add (indexed {counts[0]}→{counts[-1]}), search exit 0; "
        f"add exit 0: {state}, bees gone, cache exact"
    )


def _documents(lab: Lab, library) -> list[dict]:
    listed = lab.docdesk(library, "list")
    listed.expect_clean(0)
    return listed.json["documents"]


@attack(
    "1: file rewritten while add runs, 8 runs",
    "the text stored under a document's id is the text of the bytes it is the hash of (or 'kept changing')",
    slow=True,
    runs=8,
)
@attack(
    "1: file rewritten while add runs",
    "the text stored under a document's id is the text of the bytes it is the hash of (or 'kept changing')",
    runs=1,
)
def rewritten_during_add(lab: Lab, runs: int) -> str:
    path = lab.work / "report.txt"
    path.write_bytes(VERSIONS["alpha"])
    ids = {hashlib.sha256(data).hexdigest(): word for word, data in VERSIONS.items()}
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    writer = context.Process(target=_keep_rewriting, args=(str(path), stop))
    writer.start()
    outcomes = []
    try:
        for run in range(runs):
            library = lab.work / f"lib{run}"
            added = lab.docdesk(library, "add", str(path), model=lab.shared.standin_model())
            added.expect_clean({0, 1})
            outcomes += _check_versions(library, ids, added.json)
    finally:
        stop.set()
        writer.join(timeout=10)
    return (
        f"{runs} add(s) beside a process saving the file every 30 ms: {', '.join(outcomes)}; each id holds its own text"
    )


def _check_versions(library, ids: dict[str, str], report: dict) -> list[str]:
    for failed in report["failed"]:
        expect("kept changing" in failed["reason"], f"failed for another reason: {failed['reason']}")
    outcomes = ["failed: kept changing"] * len(report["failed"])
    for doc_id, text in _texts_by_id(library):
        words = {w for w in ("alpha", "bravo") if w in text}
        expect(len(words) == 1, f"a torn mix of versions: {sorted(words)}")
        word = words.pop()
        expect(ids.get(doc_id) == word, f"the '{word}' text is stored under the id of another version")
        outcomes.append(f"indexed {word}")
    return outcomes


def _texts_by_id(library):
    return query(
        library,
        "SELECT d.id, group_concat(p.text, char(10)) FROM documents d JOIN pages p ON p.doc_id = d.id "
        "WHERE d.status = 'indexed' GROUP BY d.id",
    )


@attack(
    "10: queued forever after kill -9 and delete",
    "documents a kill left queued whose files were then deleted are removed by the next sync (exit 0)",
)
def queued_after_kill_and_delete(lab: Lab) -> str:
    notes = numbered_notes(lab.work / "notes", 6)
    library = lab.work / "lib"
    db = library / "library.sqlite"
    add = lab.start(library, "add", str(notes))
    wait_for(lambda: _indexed(db) >= 1, 300, "document indexed", add)
    kill_9(add)
    queued = [r[0] for r in query(library, "SELECT path FROM documents WHERE status = 'queued'")]
    expect(queued, "the kill left nothing queued")
    for path in queued:
        (notes / path.rsplit("/", 1)[1]).unlink()
    synced = lab.docdesk(library, "sync")
    synced.expect_clean(0)
    removed = {r["path"] for r in synced.json["removed"]}
    expect(set(queued) <= removed, f"sync removed {len(removed)} of the {len(queued)} queued documents")
    state = consistent(library)
    expect("queued" not in statuses(library), f"still queued after sync: {state}")
    return f"kill left {len(queued)} queued, their files deleted; sync exit 0 removed them; {state}"

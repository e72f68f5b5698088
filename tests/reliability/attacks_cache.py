"""Attacks on the vector cache and on paths: vectors.faiss deleted, truncated, overwritten with
garbage, copied from another library, newer than a database restored from a backup, or with a
damaged length field; `remove PATH` of one of two files with the same bytes."""

from __future__ import annotations

import os
import random
import shutil
import struct
from pathlib import Path

from tests.reliability.checks import cache_matches, consistent, query
from tests.reliability.harness import NOTES, Lab, attack, documents, expect, write_notes

CACHE = "vectors.faiss"


def _doc_id(lab: Lab, library: Path, name: str) -> str:
    return next(d["doc_id"] for d in documents(lab, library) if d["path"].endswith(name))


def _remove_then_check(lab: Lab, library: Path, damage: str) -> str:
    """`remove` a document, which brings the cache in line with SQLite, and check it is exact."""
    removed = lab.docdesk(library, "remove", _doc_id(lab, library, "bees.md"))
    removed.expect_clean(0)
    count = cache_matches(library)
    expect(count == len(NOTES) - 1, f"{count} passages in the cache after removing one of {len(NOTES)}")
    return f"{damage}; remove exit 0, rebuilt from SQLite: {count} passages, each with its own vector"


@attack("vectors.faiss deleted", "the cache is rebuilt from SQLite, exactly")
def cache_deleted(lab: Lab) -> str:
    library = lab.library()
    (library / CACHE).unlink()
    return _remove_then_check(lab, library, "cache deleted")


@attack("vectors.faiss truncated", "the cache is rebuilt from SQLite, exactly")
def cache_truncated(lab: Lab) -> str:
    library = lab.library()
    data = (library / CACHE).read_bytes()
    (library / CACHE).write_bytes(data[: len(data) // 2])
    return _remove_then_check(lab, library, f"cache cut to {len(data) // 2} of {len(data)} bytes")


@attack("vectors.faiss garbage", "the cache is rebuilt from SQLite, exactly")
def cache_garbage(lab: Lab) -> str:
    library = lab.library()
    size = (library / CACHE).stat().st_size
    (library / CACHE).write_bytes(b"IxM2" + random.Random(13).randbytes(size - 4))  # FAISS's magic, then noise
    return _remove_then_check(lab, library, f"cache overwritten with {size} bytes of noise")


@attack(
    "3: vector cache from another library",
    "a vectors.faiss with the same ids and other vectors is not trusted: rebuilt exactly",
)
def cache_from_another_library(lab: Lab) -> str:
    import faiss
    import numpy as np

    library = lab.library()
    ours = faiss.read_index(str(library / CACHE))
    ids = faiss.vector_to_array(ours.id_map)
    vectors = np.vstack([ours.reconstruct(int(i)) for i in ids])
    theirs = faiss.IndexIDMap2(faiss.IndexFlatIP(ours.d))
    theirs.add_with_ids(np.roll(vectors, 1, axis=0), ids)  # every id holds another passage's vector
    faiss.write_index(theirs, str(library / CACHE))
    return _remove_then_check(lab, library, "a cache of the same ids with other vectors")


@attack(
    "3: database restored from a backup",
    "a cache newer than the restored library.sqlite is not trusted: search finds what the backup holds",
)
def database_restored_from_backup(lab: Lab) -> str:
    library = lab.library()
    shutil.copy(library / "library.sqlite", lab.work / "backup.sqlite")
    lab.docdesk(library, "remove", _doc_id(lab, library, "kettle.md")).expect_clean(0)
    again = write_notes(lab.work / "again", ["kettle.md"]) / "kettle.md"
    lab.docdesk(library, "add", str(again)).expect_clean(0)  # the same count of passages, other ids
    for leftover in ("library.sqlite-wal", "library.sqlite-shm"):
        (library / leftover).unlink(missing_ok=True)
    shutil.copy(lab.work / "backup.sqlite", library / "library.sqlite")
    found = lab.docdesk(library, "search", "when", "does", "the", "kettle", "whistle")
    found.expect_clean(0)
    top = found.json["results"][0]
    expect(top["path"].endswith("kettle.md") and "/again/" not in top["path"], f"search found {top['path']}")
    count = cache_matches(library)
    return f"backup restored under a newer cache; search exit 0 finds the backup's kettle; cache exact ({count})"


@attack(
    "3: corrupt length field in vectors.faiss",
    "a damaged length field means a rebuild, not a MemoryError (memory stays small)",
)
def cache_length_field(lab: Lab) -> str:
    library = lab.library()
    path = library / CACHE
    data = bytearray(path.read_bytes())
    dim = query(library, "SELECT value FROM meta WHERE key = 'embedding_dim'")[0][0]
    codes = struct.pack("<Q", len(NOTES) * int(dim))  # the flat index's float count, before its vectors
    at = data.index(codes, data.index(b"IxFI"))
    data[at : at + 8] = struct.pack("<Q", 2**36)  # 256 GB of floats
    path.write_bytes(bytes(data))
    observation = _remove_then_check(lab, library, "float count set to 2^36")
    expect(lab.peak_mb < 1500, f"peak memory {lab.peak_mb:.0f} MB")
    return observation


@attack(
    "4: remove PATH of twin files",
    "removing one path of a document that is also at other paths keeps the document at them",
)
def remove_one_twin(lab: Lab) -> str:
    library = lab.library()
    a = write_notes(lab.work / "a", ["cats.md"]) / "cats.md"
    b = write_notes(lab.work / "b", ["cats.md"]) / "cats.md"
    lab.docdesk(library, "add", str(a), str(b)).expect_clean(0)  # the same bytes as the library's cats.md
    cats = _doc_id(lab, library, "cats.md")
    first = lab.docdesk(library, "remove", str(a))
    first.expect_clean(0)
    kept = first.json["removed"][0]["kept_at"]
    expect(kept is not None, "remove of one path removed the document")
    paths = {r[0] for r in query(library, "SELECT path FROM files WHERE doc_id = ?", cats)}
    expect(str(a) not in paths and str(b) in paths, f"paths after removing a: {sorted(paths)}")
    lab.docdesk(library, "remove", str(b)).expect_clean(0)
    left = [r[0] for r in query(library, "SELECT path FROM files WHERE doc_id = ?", cats)]
    expect(len(left) == 1 and os.path.basename(left[0]) == "cats.md", f"paths left: {left}")
    lab.docdesk(library, "remove", left[0]).expect_clean(0)
    gone = not query(library, "SELECT 1 FROM documents WHERE id = ?", cats)
    expect(gone, "the document stayed after its last path was removed")
    consistent(library)
    return f"remove a: exit 0, kept at {Path(kept).parent.name}/; remove b: kept at the third path; last path: gone"

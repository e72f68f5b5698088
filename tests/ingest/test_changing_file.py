"""A file rewritten while `add` runs: the text stored under a document's id is always the text of
the bytes that id is the hash of (3 of 8 runs stored the other version's text before)."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import time

import pytest

from ingest.pipeline import Ingestor
from ingest.store.library import Library

pytestmark = pytest.mark.models

LINES = 1500  # ~100 KB: quick to embed, slow enough to be caught mid-read


def _version(word: str) -> bytes:
    return "".join(f"{word} line {n:05d} of the changing report.\n" for n in range(LINES)).encode()


VERSIONS = {word: _version(word) for word in ("alpha", "bravo")}  # the same length


def _keep_rewriting(path: str, stop) -> None:
    """Save the file again and again, alternating versions, as an editor would: by renaming a
    new file over it, or by writing it in place."""
    flip = 0
    while not stop.is_set():
        data = VERSIONS["alpha" if flip % 2 == 0 else "bravo"]
        if flip % 4 < 2:
            with open(path + ".new", "wb") as handle:
                handle.write(data)
            os.replace(path + ".new", path)
        else:
            with open(path, "r+b") as handle:
                handle.write(data)
        flip += 1
        time.sleep(0.03)


def test_text_stored_under_an_id_is_the_text_of_those_bytes(tmp_path, embedder):
    path = tmp_path / "report.txt"
    path.write_bytes(VERSIONS["alpha"])
    ids = {hashlib.sha256(data).hexdigest(): word for word, data in VERSIONS.items()}
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    writer = context.Process(target=_keep_rewriting, args=(str(path), stop))
    writer.start()
    outcomes = []
    try:
        for run in range(6):
            library = Library(tmp_path / f"lib{run}")
            try:
                Ingestor(library, embedder).add([path])
                for doc in library.documents():
                    if doc.status == "failed":
                        assert "kept changing" in doc.reason, doc.reason
                        outcomes.append("failed")
                        continue
                    text = "\n".join(page.text for page in library.pages(doc.id))
                    words = {w for w in ("alpha", "bravo") if w in text}
                    assert doc.status == "indexed" and len(words) == 1, (doc.status, words)  # never a torn mix
                    assert ids.get(doc.id) == words.pop(), "another version's text under this id"
                    outcomes.append("indexed")
            finally:
                library.close()
    finally:
        stop.set()
        writer.join(timeout=10)
    assert "indexed" in outcomes  # most runs catch a stable moment and index it

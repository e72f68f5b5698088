"""A passage repeated in a document is embedded once (ingest/embedding.py, encode_distinct): an ODS
that repeats one row a billion times (the reliability suite's input, built for real) gives
thousands of passages but a few hundred distinct ones, and embedding is most of an add's time.
The stored vectors are the same as encoding every passage."""

from __future__ import annotations

import numpy as np

from app.desk.services import DocDesk
from app.desk.settings import Settings
from ingest.embedding import encode_distinct
from tests.reliability.inputs_declared import repeated_ods
from tests.standin_embedder import HashingEmbedder


class CountingEmbedder:
    """The stand-in embedder, counting the texts it is asked to encode."""

    def __init__(self) -> None:
        self.inner, self.encoded = HashingEmbedder(), 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def encode(self, texts):
        self.encoded += len(texts)
        return self.inner.encode(texts)


def test_each_distinct_text_is_encoded_once_and_the_rows_are_the_same():
    embedder, plain = CountingEmbedder(), HashingEmbedder()
    texts = ["tides rise", "bees carry pollen", "tides rise", "", "bees carry pollen"]
    known: dict = {}
    vectors = encode_distinct(embedder, texts, known)
    assert embedder.encoded == 3 and np.allclose(vectors, plain.encode(texts))
    more = encode_distinct(embedder, ["tides rise", "kettles whistle"], known)  # the same document, later
    assert embedder.encoded == 4 and np.allclose(more, plain.encode(["tides rise", "kettles whistle"]))
    assert encode_distinct(embedder, [], {}).shape == (0, plain.dim)


def test_a_repeated_ods_row_is_embedded_once_per_distinct_passage(tmp_path):
    ods = repeated_ods(tmp_path / "repeated.ods")
    embedder = CountingEmbedder()
    desk = DocDesk(Settings(library=tmp_path / "library"), embedder=embedder)
    try:
        report = desk.add([ods])
        assert not report.failed, report.failed
        (row,) = desk.documents()
        passages = row.passages
    finally:
        desk.close()
    assert passages > 1000 and embedder.encoded < passages / 5, (passages, embedder.encoded)

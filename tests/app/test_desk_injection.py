"""The façade with the model and the embedder it is given (`DocDesk(settings, backend=, embedder=)`):
the stand-in embedder (tests/standin_embedder.py) and the fake backend, through the real library,
retrieval and answering; nothing is loaded, so these run in `make test-fast`."""

from __future__ import annotations

import pytest

from app.desk.answering import final_answer
from app.desk.services import DocDesk
from app.desk.settings import Settings
from engine.backends.fake import FakeBackend
from ingest.pipeline import Ingestor
from ingest.store.library import Library
from tests.conftest import SAMPLES
from tests.standin_embedder import HashingEmbedder

QUESTION = "Which Python version does DocDesk need?"


@pytest.fixture
def folder(tmp_path, standin_embedder):
    """The English guide, read in this process and embedded by the stand-in."""
    library = Library(tmp_path / "library")
    Ingestor(library, standin_embedder, read_in_subprocess=False).add([SAMPLES / "docdesk-guide.md"])
    library.close()
    return tmp_path / "library"


def test_the_given_embedder_and_backend_answer_a_question(folder, standin_embedder):
    backend = FakeBackend(max_concurrency=3)
    desk = DocDesk(Settings(library=folder), backend=backend, embedder=standin_embedder)
    try:
        assert desk.embedder is standin_embedder and desk.backend() is backend
        assert desk.retriever.embedder is standin_embedder and desk.vectors.embedder is standin_embedder
        assert desk.parallel_answers() == 3  # the given backend's slots, before anything loads
        hits = desk.search(QUESTION, k=3).hits
        assert hits and all(hit.passage.path.endswith("docdesk-guide.md") for hit in hits)
        answered = final_answer(desk.answer(QUESTION, save_chat=False))
        assert answered.text.startswith("Fake reply to:") and answered.sources
        assert "3.11" in "\n".join(m["content"] for m in backend.requests[-1].messages)  # the guide was quoted
    finally:
        desk.close()
    assert backend.closed  # the façade closes a given backend as its own


def test_a_library_of_the_given_embedder_is_not_embedded_again(folder, standin_embedder):
    desk = DocDesk(Settings(library=folder), backend=FakeBackend(), embedder=standin_embedder)
    try:
        before = standin_embedder.encoded
        assert desk.reembed() == 0
        desk.search(QUESTION)
        assert standin_embedder.encoded == before + 1  # the question alone
    finally:
        desk.close()


def test_another_embedder_re_embeds_what_the_first_made(folder):
    other = HashingEmbedder(name="docdesk-test-hashing-other", dim=64)
    desk = DocDesk(Settings(library=folder), backend=FakeBackend(), embedder=other)
    try:
        assert desk.reembed() == 1  # vectors of two models are never searched together
        assert desk.library.meta("embedding_model") == other.name
        assert desk.search(QUESTION).hits
    finally:
        desk.close()


def test_without_a_backend_the_settings_name_it_and_close_backend_goes_back_to_them(folder, standin_embedder):
    settings = Settings(library=folder)
    settings.llm.backend = "fake"
    given = FakeBackend()
    desk = DocDesk(settings, backend=given, embedder=standin_embedder)
    try:
        desk.close_backend()
        assert given.closed
        made = desk.backend()
        assert made is not given and isinstance(made, FakeBackend)  # what the settings name
    finally:
        desk.close()

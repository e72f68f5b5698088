"""Shared fixtures. No test may reach the network: sockets are limited to loopback.

Markers come from what a test uses (tests/markers.py): a fixture that loads a model, drives the
window or starts a child process says so with @marks(...), and every test that uses it gets the
marker; `make test-fast` leaves those tests out."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from tests.markers import marks
from tests.markers import pytest_collection_modifyitems as pytest_collection_modifyitems  # noqa: F401
from tests.markers import unmarked_work_fails as _unmarked_work_fails  # noqa: F401

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "corpus"  # made by tests/data/make_corpus.py and py-pdf/sample-files
SAMPLES = ROOT / "assets" / "samples"

NETGUARD = Path(__file__).resolve().parent / "netguard"
# This process and every Python process a test starts get the loopback-only socket guard.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(NETGUARD), os.environ.get("PYTHONPATH")]))
_spec = importlib.util.spec_from_file_location("docdesk_netguard", NETGUARD / "sitecustomize.py")
_spec.loader.exec_module(importlib.util.module_from_spec(_spec))  # children load it as sitecustomize


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory, monkeypatch):
    config = tmp_path_factory.getbasetemp() / "config.toml"
    monkeypatch.setenv("DOCDESK_CONFIG", str(config))
    monkeypatch.setenv("DOCDESK_LOG_DIR", str(tmp_path_factory.getbasetemp() / "logs"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"the test corpus is missing at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session")
@marks("models")
def embedder():
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder

    model = SentenceTransformerEmbedder()
    model.warm_up()
    return model


@pytest.fixture(scope="session")
@marks("models", "subprocess")  # read by the reader process, embedded by the bundled model
def corpus_library(tmp_path_factory, corpus, embedder):
    """One library holding the whole test corpus and the sample guides, built once."""
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    library = Library(tmp_path_factory.mktemp("corpus-library"))
    report = Ingestor(library, embedder).add([corpus, SAMPLES])
    yield library, report
    library.close()


@pytest.fixture(scope="session")
@marks("models", "subprocess")
def native_llama():
    """One real completion of the bundled model in a child process, run once per session.

    Tests that load llama.cpp in this process depend on it: when llama.cpp crashes (a bad
    release, a CPU its kernels mishandle), each of them fails with the child's signal and
    the run goes on, instead of a segfault ending pytest.
    """
    from tests.native import completion_code, run_child

    return run_child(completion_code(max_tokens=8), timeout=300)


@pytest.fixture(autouse=True)
def _llama_must_run_natively(request):
    if request.node.get_closest_marker("models") is not None and request.node.get_closest_marker("gpu") is None:
        result = request.getfixturevalue("native_llama")
        if result.crash:
            pytest.fail(f"llama.cpp cannot run a completion here, so this test would crash pytest: {result.describe()}")


@pytest.fixture(scope="session")
@marks("models")
def bundled_llm():
    """The bundled SmolLM2 GGUF, in process, loaded once for the session."""
    from engine.backends.llama_cpp import LlamaCppBackend

    backend = LlamaCppBackend()
    backend.warm_up()
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def standin_embedder():
    """A deterministic hashing embedder (tests/standin_embedder.py) for the tests that do not judge
    retrieval quality: it loads nothing, so they are no `models` tests."""
    from tests.standin_embedder import HashingEmbedder

    return HashingEmbedder()


def corpus_path(*parts: str) -> str:
    return str(CORPUS.joinpath(*parts).absolute())

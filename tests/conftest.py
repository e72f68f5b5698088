"""Shared fixtures. No test may reach the network: sockets are limited to loopback."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
SAMPLES = ROOT / "assets" / "samples"

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check(sock: socket.socket, address) -> None:
    if sock.family == socket.AF_UNIX:
        return
    host = address[0] if isinstance(address, tuple) else address
    if host in ("localhost", "::1") or str(host).startswith("127."):
        return
    raise RuntimeError(f"test tried to reach the network: {address!r}")


def _guarded_connect(self, address):
    _check(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    _check(self, address)
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory, monkeypatch):
    config = tmp_path_factory.getbasetemp() / "config.toml"
    monkeypatch.setenv("DOCDESK_CONFIG", str(config))


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"the shared corpus is missing at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session")
def embedder():
    from ingest.embedding import SentenceTransformerEmbedder

    model = SentenceTransformerEmbedder()
    model.warm_up()
    return model


@pytest.fixture(scope="session")
def corpus_library(tmp_path_factory, corpus, embedder):
    """One library holding the whole shared corpus and the sample guides, built once."""
    from ingest.pipeline import Ingestor
    from ingest.store.library import Library

    library = Library(tmp_path_factory.mktemp("corpus-library"))
    report = Ingestor(library, embedder).add([corpus, SAMPLES])
    yield library, report
    library.close()

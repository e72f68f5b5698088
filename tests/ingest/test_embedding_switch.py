"""A library built with the old default (all-MiniLM-L6-v2) opened with the new multilingual default:
it re-embeds with progress, searches while it does and after, and `[embedding] model` still picks
MiniLM (which re-embeds back)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.retrieval.retrieve import HybridRetriever
from ingest.embedders.sentence_transformer import BUNDLED_MODEL, SentenceTransformerEmbedder
from ingest.embedding import DEFAULT_MODEL, make_embedder
from ingest.pipeline import Ingestor
from ingest.store.library import Library

pytestmark = pytest.mark.models

ROOT = Path(__file__).resolve().parents[2]
GUIDES = [ROOT / "assets" / "samples" / "docdesk-guide.md", ROOT / "assets" / "samples" / "docdesk-guide-zh.md"]
CHAPTER = ROOT / "tests" / "eval" / "data" / "rust-book" / "en" / "ch09-02-recoverable-errors-with-result.md"


def _cli(home: Path, config: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, DOCDESK_HOME=str(home), DOCDESK_CONFIG=str(config), HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_the_default_is_multilingual_and_named_apart_from_minilm():
    default = make_embedder(None)
    assert DEFAULT_MODEL != BUNDLED_MODEL and default.name == DEFAULT_MODEL
    assert default.multilingual and default.name != SentenceTransformerEmbedder().name
    assert make_embedder(BUNDLED_MODEL).name == BUNDLED_MODEL  # still the user's to choose


def test_minilm_library_reembeds_with_progress_and_searches_during_and_after(tmp_path):
    library = Library(tmp_path / "lib")
    old = SentenceTransformerEmbedder()
    Ingestor(library, old).add([*GUIDES, CHAPTER])
    assert {d.embed_model for d in library.documents()} == {BUNDLED_MODEL}
    passages = library.passage_count()

    new = make_embedder(None)
    retriever = HybridRetriever(library, new)
    events, during = [], []

    def progress(event):
        events.append(event)
        if event.stage == "reembedding" and event.files_done == 1:  # one document re-embedded, two not
            during.extend(retriever.search("问号运算符怎样传播错误？", k=5).hits)

    assert Ingestor(library, new, on_progress=progress).reembed_stale() == 3
    steps = [(e.files_done, e.files_total) for e in events if e.stage == "reembedding"]
    assert steps == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert during  # keyword search answers while the other model's vectors are being replaced
    assert {d.embed_model for d in library.documents()} == {new.name}
    assert library.meta("embedding_model") == new.name and library.meta("embedding_dim") == str(new.dim)
    assert library.passage_count() == passages  # the same passages: only their vectors changed

    retriever.vectors.refresh()
    hits = retriever.search("问号运算符怎样传播错误？", k=5).hits  # a Chinese question, an English answer
    assert any(h.passage.path == str(CHAPTER) and h.dense_rank is not None for h in hits[:3])
    library.close()


def test_cli_reembeds_an_old_library_with_progress_and_back_only_when_asked(tmp_path):
    home, minilm, default = tmp_path / "home", tmp_path / "minilm.toml", tmp_path / "default.toml"
    minilm.write_text(f'[embedding]\nmodel = "{BUNDLED_MODEL}"\n', encoding="utf-8")
    default.write_text("[embedding]\n", encoding="utf-8")
    _cli(home, minilm, "add", *map(str, GUIDES), CHAPTER.as_posix())

    switched = _cli(home, default, "search", "How do I add an encrypted PDF?", "--json")
    assert "re-embedding for a new model: 3/3 documents" in switched.stderr
    assert "--password" in json.dumps(json.loads(switched.stdout), ensure_ascii=False)

    again = _cli(home, default, "search", "加密的 PDF 怎么添加？", "--json")
    assert "re-embedding" not in again.stderr and json.loads(again.stdout)

    # The MiniLM setting is now one the library left: a search with it never converts it back
    # (a second DocDesk with an old config would otherwise undo the switch) ...
    stale = _cli(home, minilm, "search", "How do I add an encrypted PDF?", "--json")
    assert "re-embedding" not in stale.stderr and "does not convert it back" in stale.stderr
    assert json.loads(stale.stdout)["results"]  # keywords still find the answer
    # ... going back is deliberate: `docdesk reembed`.
    back = _cli(home, minilm, "reembed")
    assert "re-embedding for a new model: 3/3 documents" in back.stderr and "3 documents embedded again" in back.stdout
    library = Library(home)
    assert library.meta("embedding_model") == BUNDLED_MODEL
    library.close()


def test_the_facade_reembeds_once_with_progress_for_the_window(tmp_path):
    from app.desk.services import DocDesk
    from app.desk.settings import load_settings

    library = Library(tmp_path / "lib")
    Ingestor(library, SentenceTransformerEmbedder()).add(GUIDES)
    library.close()
    desk = DocDesk(load_settings(tmp_path / "none.toml", library=str(tmp_path / "lib")))
    events = []
    assert desk.reembed(events.append) == 2  # what the window runs when it opens, on its ingest worker
    assert [(e.files_done, e.files_total) for e in events if e.stage == "reembedding"][-1] == (2, 2)
    assert desk.reembed(events.append) == 0  # done once; a question asked meanwhile would have waited
    assert desk.search("加密的 PDF 怎么添加？").hits

"""The records that travel from the engine to the CLI, the window and the chat history."""

from __future__ import annotations

import json

from engine.summarize import Summary, SummarySection, render_markdown
from ingest.records import CitedSource, page_label
from ingest.store.chats import ChatMessage, ChatStore
from ingest.store.library import Library


def test_pages_are_named_one_way_everywhere():
    assert page_label(3) == "p. 3" and page_label(12, 19) == "pp. 12–19"
    assert page_label(2, synthetic=True) == "p. ~2" and page_label(2, 4, True) == "pp. ~2–~4"
    assert page_label(2, 4, language="zh") == "第 2–4 页" and page_label(5, 5, language="zh") == "第 5 页"


def _source(**changes) -> CitedSource:
    fields = dict(n=2, doc_id="abc", title="Guide", path="/d/guide.txt", page=3, page_end=4, text="Cats sleep.")
    return CitedSource(**{**fields, **changes})


def test_a_cited_source_survives_its_json_form_unchanged():
    source = _source(synthetic_pages=True, span_pages=(2, 5), cited=True, excerpt=True)
    assert CitedSource.from_json(json.loads(json.dumps(source.to_json()))) == source
    assert source.label == "[2] Guide, p. ~3" and source.to_json()["page_label"] == "p. ~3"


def test_sources_stored_by_an_older_version_are_read():
    old = {"n": 1, "doc_id": "d", "title": "", "path": "/x.pdf", "page": 7, "text": "t", "page_synthetic": False}
    source = CitedSource.from_json(old)
    assert (source.page, source.page_end, source.cited, source.name) == (7, 7, False, "/x.pdf")
    assert not source.excerpt


def test_a_chat_keeps_its_sources_as_records(tmp_path):
    library = Library(tmp_path)
    store = ChatStore(library)
    chat = store.create("cats")
    sources = [_source(cited=True), _source(n=3, page=9, page_end=9)]
    store.add_message(chat.id, ChatMessage("user", "Where do cats sleep?"))
    store.add_message(chat.id, ChatMessage("assistant", "By the fire [2].", sources=sources))
    library.close()
    reopened = Library(tmp_path)
    assert ChatStore(reopened).messages(chat.id)[1].sources == sources
    reopened.close()


def _summary(synthetic: bool, language: str = "en") -> Summary:
    sections = [SummarySection(1, 2, "- One <b>bold</b> claim", synthetic), SummarySection(3, 3, "- Two", synthetic)]
    return Summary("d", "A text file", "brief", language, "It is about <i>cats</i>.", sections, 1, 2, 3, 0)


def test_a_summary_is_data_rendered_with_or_without_page_links():
    summary = _summary(synthetic=True)
    plain = summary.text
    assert "**pp. ~1–~2**\n- One <b>bold</b> claim" in plain and "**p. ~3**" in plain
    linked = render_markdown(summary, page_link=lambda s: f"page:{s.page}", text=lambda t: t.replace("<", "\\<"))
    assert "**[pp. ~1–~2](page:1)**" in linked and "**[p. ~3](page:3)**" in linked
    assert "\\<b>" in linked and "\\<i>" in linked
    data = summary.as_dict()
    assert data["sections"][0] == {
        "page": 1,
        "page_end": 2,
        "page_synthetic": True,
        "page_label": "pp. ~1–~2",
        "notes": "- One <b>bold</b> claim",
    }
    assert "## 要点" in _summary(False, "zh").text and "**第 1–2 页**" in _summary(False, "zh").text

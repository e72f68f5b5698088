"""The chat transcript: each message rendered on its own, so a model's broken Markdown stays in its
message, raw HTML shows as text, and citations are links everywhere."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from app.gui.chat_pane import ChatPane  # noqa: E402
from ingest.records import CitedSource  # noqa: E402


def source(n: int) -> CitedSource:
    return CitedSource(n, f"doc{n}", f"Guide {n}", f"/docs/guide{n}.pdf", n, n, f"text {n}", cited=True)


def answer(text: str, *numbers: int) -> dict:
    return {"role": "assistant", "text": text, "sources": [source(n) for n in numbers], "pending": False}


def anchors(pane: ChatPane) -> list[tuple[str, str, bool]]:
    """(link, its text, whether it is in a code block) for each link in the transcript."""
    found = []
    block = pane.transcript.document().begin()
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            href = fragment.charFormat().anchorHref()
            if href:
                found.append((href, fragment.text(), block.blockFormat().nonBreakableLines()))
            iterator += 1
        block = block.next()
    return found


def in_code(pane: ChatPane, text: str) -> bool:
    """Whether the block holding `text` is a code block."""
    block = pane.transcript.document().find(text).block()
    assert block.isValid(), text
    return block.blockFormat().nonBreakableLines() or block.charFormat().fontFixedPitch()


@pytest.fixture
def pane(qtbot):
    pane = ChatPane()
    qtbot.addWidget(pane)
    pane.resize(900, 600)
    return pane


UNCLOSED = "Install it [1]:\n\n```bash\npip install docdesk [2]\n<b>x</b><script>alert(1)</script>"


def test_an_unclosed_code_block_ends_with_its_message(pane):
    pane.show_messages(
        [
            {"role": "user", "text": "How do I install it?"},
            answer(UNCLOSED, 1, 2),
            {"role": "user", "text": "And then?"},
            answer("Then run *docdesk* [2]. See also [1, 2].", 1, 2),
        ]
    )
    links = anchors(pane)
    hrefs = [href for href, _text, _code in links]
    # The first answer: its citation before the code block and the one inside it, and its Sources line.
    assert ("cite:1/1", "[1]", False) in links and ("cite:1/2", "[2]", True) in links
    assert ("cite:1/1", "[1] Guide 1, p. 1", False) in links and ("cite:1/2", "[2] Guide 2, p. 2", False) in links
    # The second turn: not in the first's code block, its citations (a grouped one too) and Sources linked.
    assert not in_code(pane, "And then?") and not in_code(pane, "Then run")
    assert (
        ("cite:3/2", "[2]", False) in links and ("cite:3/1", "1", False) in links and ("cite:3/2", "2", False) in links
    )
    assert hrefs.count("cite:3/1") == 2 and hrefs.count("cite:3/2") == 3
    html = pane.transcript.toHtml()
    assert 'href="cite:1/2"' in html and 'href="cite:3/1"' in html
    text = pane.transcript.toPlainText()
    assert "<b>x</b><script>alert(1)</script>" in text  # raw HTML shown as text, not run or hidden
    assert "Sources: [1] Guide 1" in text and "See also [1, 2]." in text


def test_raw_html_and_stray_markup_are_shown_as_text(pane):
    pane.show_messages(
        [
            {"role": "user", "text": "<i>why</i> *"},
            answer("<b>x</b><script>bad()</script> a lone * and </div></pre> [1]", 1),
            {"role": "user", "text": "next"},
        ]
    )
    text = pane.transcript.toPlainText()
    assert "You: <i>why</i> *" in text
    assert "<b>x</b><script>bad()</script> a lone * and </div></pre> [1]" in text
    assert "You: next" in text and not in_code(pane, "You: next")
    assert ("cite:1/1", "[1]", False) in anchors(pane)
    assert "<script>" not in pane.transcript.toHtml()


def test_a_streamed_answer_replaces_only_itself(pane):
    pane.show_messages([{"role": "user", "text": "first"}, answer("Cats [1].", 1)])
    # As the window asks: the question and an empty answer added to the chat shown.
    pane.messages += [
        {"role": "user", "text": "second"},
        {"role": "assistant", "text": "", "sources": [], "pending": True},
    ]
    pane.render()
    assert pane.transcript.toPlainText().endswith("DocDesk: …")
    for part in ("Dogs ", "sleep [2", "]. ```\n", "code [1]"):
        pane.append_text(part)
    assert pane.transcript.toPlainText().endswith("DocDesk: Dogs sleep [2]. ``` code [1]")  # a soft line break
    pane.messages[-1].update(text="Dogs sleep [2].\n\n```\ncode [1]", sources=[source(1), source(2)], pending=False)
    pane.render()
    links = anchors(pane)
    assert ("cite:1/1", "[1]", False) in links and ("cite:3/2", "[2]", False) in links
    assert ("cite:3/1", "[1]", True) in links and ("cite:3/2", "[2] Guide 2, p. 2", False) in links
    # The same as rendering the whole chat at once.
    whole = ChatPane()
    whole.show_messages(list(pane.messages))
    assert whole.transcript.toPlainText() == pane.transcript.toPlainText()
    assert anchors(whole) == links


def test_a_new_chat_after_a_broken_one_is_whole(pane):
    pane.show_messages([{"role": "user", "text": "q"}, answer("```\nnever closed [1]", 1)])
    pane.show_messages([{"role": "user", "text": "fresh"}, answer("Fine [1].", 1)])
    assert pane.transcript.toPlainText().startswith("You: fresh")
    assert not in_code(pane, "Fine") and ("cite:1/1", "[1]", False) in anchors(pane)


@pytest.mark.parametrize("broken", ["```\nnever closed [1]\n- x", "- a list [1]\n- b", "> quoted [1]", "# heading [1]"])
def test_the_next_question_is_not_part_of_an_answer_without_sources(pane, broken):
    """No Sources line between them: the next turn still starts a paragraph of its own."""
    pane.show_messages([{"role": "user", "text": "q"}, answer(broken)])
    pane.messages += [{"role": "user", "text": "second question"}, answer("", 1) | {"pending": True}]
    pane.render()
    pane.append_text("fine [1]")
    for text in ("second question", "fine"):
        block = pane.transcript.document().find(text).block()
        assert not in_code(pane, text) and block.textList() is None and block.blockFormat().headingLevel() == 0
        assert block.blockFormat().leftMargin() == 0 and block.blockFormat().indent() == 0
    assert ("cite:1/1", "[1]", broken.startswith("```")) in anchors(pane) and ("cite:3/1", "[1]", False) in anchors(
        pane
    )

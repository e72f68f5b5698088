"""DocDesk's real answer prompt through the chat templates the models ship (tests/data/templates/,
see its README.md for where each came from): the instructions, every source with its label, and
the question arrive in order; Gemma gets the instructions in its first user turn; Qwen3 with
thinking off renders its empty think block; the generation prompt is there. The last tests run the
bundled SmolLM2 in process and check that llama_cpp.py renders through engine/backends/chat_template.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.backends.base import ChatRequest
from engine.backends.chat_template import FORCED_CLOSE, ChatTemplate, ThinkingBudget
from engine.prompts import answer_messages, format_source
from tests.conftest import ROOT, SAMPLES

TEMPLATES = ROOT / "tests" / "data" / "templates"
QUESTION = "How do I add a whole folder of documents, and how do I pick up files added to it later?"

# family -> (template file, BOS, EOS, what the prompt ends with: the assistant's turn opening)
FAMILIES = {
    "qwen2.5": ("Qwen-Qwen2.5-7B-Instruct.jinja", "", "<|im_end|>", "<|im_start|>assistant\n"),
    "qwen3": ("Qwen-Qwen3-0.6B.jinja", "", "<|im_end|>", "<|im_start|>assistant\n"),
    "llama3.1": (
        "meta-llama-Llama-3.1-8B-Instruct.jinja",
        "<|begin_of_text|>",
        "<|eot_id|>",
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
    ),
    "llama3.2": (
        "meta-llama-Llama-3.2-3B-Instruct.jinja",
        "<|begin_of_text|>",
        "<|eot_id|>",
        "<|start_header_id|>assistant<|end_header_id|>\n\n",
    ),
    "gemma3": ("google-gemma-3-27b-it.jinja", "<bos>", "<eos>", "<start_of_turn>model\n"),
    "gemma2": ("google-gemma-2-2b-it.jinja", "<bos>", "<eos>", "<start_of_turn>model\n"),
    "mistral-small-3.2": ("Mistral-Small-3.2-24B-Instruct-2506.jinja", "<s>", "</s>", "[/INST]"),
    "mistral-nemo": ("mistralai-Mistral-Nemo-Instruct-2407.jinja", "<s>", "</s>", "[/INST]"),
    "deepseek-r1": (
        "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
        "<｜begin▁of▁sentence｜>",
        "<｜end▁of▁sentence｜>",
        "<｜Assistant｜><think>\n",
    ),
}


def template(family: str) -> ChatTemplate:
    name, bos, eos, _ = FAMILIES[family]
    return ChatTemplate((TEMPLATES / name).read_text(encoding="utf-8"), bos_token=bos, eos_token=eos)


def guide_sections() -> list[tuple[str, str]]:
    """(heading, text) of the sample user guide (assets/samples/docdesk-guide.md), a real document."""
    text = (SAMPLES / "docdesk-guide.md").read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return [(parts[i].strip(), parts[i + 1].strip()) for i in range(1, len(parts) - 1, 2)]


@pytest.fixture(scope="module")
def sources() -> list[tuple[str, str]]:
    """Three passages of the guide, as retrieval hands them to the prompt: label and text."""
    wanted = [s for s in guide_sections() if s[0] in ("Installing DocDesk", "Adding documents")]
    others = [s for s in guide_sections() if s not in wanted]
    picked = [*wanted, others[-1]]
    assert len(picked) == 3 and all(len(text) > 100 for _, text in picked)
    return [(f'<source n="{n}" title="docdesk-guide.md" page="{n}">', text) for n, (_, text) in enumerate(picked, 1)]


@pytest.fixture(scope="module")
def messages(sources) -> list[dict]:
    blocks = [format_source(n, "docdesk-guide.md", str(n), text) for n, (_, text) in enumerate(sources, 1)]
    return answer_messages(QUESTION, blocks, [], "en")


def in_order(prompt: str, pieces: list[str]) -> list[int]:
    """Where each piece starts, each found after the one before (-1 where it is missing)."""
    found, start = [], 0
    for piece in pieces:
        at = prompt.find(piece, start)
        found.append(at)
        start = at + len(piece) if at >= 0 else start
    return found


def expected_pieces(messages, sources) -> list[str]:
    system = messages[0]["content"]
    pieces = [system.strip()]
    for label, text in sources:
        pieces += [label, text]
    return pieces + [f"Question: {QUESTION}"]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_instructions_sources_and_question_arrive_in_order(family, messages, sources):
    rendered = template(family).render(messages)
    pieces = expected_pieces(messages, sources)
    positions = in_order(rendered.prompt, pieces)
    missing = [piece[:60] for piece, at in zip(pieces, positions, strict=True) if at < 0]
    assert not missing, f"{family}: not in the prompt, in this order: {missing}"
    assert rendered.prompt.endswith(FAMILIES[family][3]), f"{family}: no generation prompt at the end"
    assert rendered.prompt.count(QUESTION) == 1


@pytest.mark.parametrize("family", ["gemma3", "gemma2"])
def test_gemma_gets_the_instructions_in_its_first_user_turn(family, messages):
    rendered = template(family).render(messages)
    prompt = rendered.prompt
    assert "<start_of_turn>system" not in prompt
    turns = re.findall(r"<start_of_turn>(\w+)\n(.*?)<end_of_turn>", prompt, flags=re.DOTALL)
    assert [role for role, _ in turns] == ["user"]
    assert turns[0][1].startswith(messages[0]["content"].strip())
    assert turns[0][1].rstrip().endswith(f"Question: {QUESTION}")
    # Gemma 3's template folds the system message itself; Gemma 2's raises, so DocDesk folds it.
    assert rendered.system_in_user is (family == "gemma2")


def test_gemma2_with_a_follow_up_keeps_the_turns_alternating(messages):
    history = [
        {"role": "user", "content": "What does DocDesk read?"},
        {"role": "assistant", "content": "PDFs, Word files, HTML, Markdown and plain text [1]."},
    ]
    follow_up = [messages[0], *history, messages[-1]]
    prompt = template("gemma2").render(follow_up).prompt
    turns = re.findall(r"<start_of_turn>(\w+)\n(.*?)<end_of_turn>", prompt, flags=re.DOTALL)
    assert [role for role, _ in turns] == ["user", "model", "user"]
    assert turns[0][1].startswith(messages[0]["content"].strip()) and turns[0][1].endswith("What does DocDesk read?")


def test_qwen3_thinking_off_renders_the_empty_think_block(messages):
    qwen3 = template("qwen3")
    off = qwen3.render(messages, thinking=False)
    assert off.prompt.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert not off.thinking_open and not off.switch  # the template reads enable_thinking: no soft switch
    for thinking in (None, True):  # Qwen3 thinks by default: the model opens <think> itself
        on = qwen3.render(messages, thinking=thinking)
        assert on.prompt.endswith("<|im_start|>assistant\n") and "<think>" not in on.prompt
    assert QUESTION in off.prompt and "/no_think" not in off.prompt


def test_a_template_that_opens_think_is_closed_when_thinking_is_off(messages):
    r1 = template("deepseek-r1")
    assert r1.render(messages).thinking_open  # R1 distills always start inside <think>
    off = r1.render(messages, thinking=False)
    assert off.prompt.endswith("<｜Assistant｜><think>\n" + FORCED_CLOSE) and not off.thinking_open
    assert "/no_think" not in off.prompt and not off.switch  # its "</think>" is no soft switch


def test_templates_without_enable_thinking_are_rendered_as_before(messages):
    for family in ("qwen2.5", "llama3.2", "gemma3", "mistral-small-3.2"):
        chat = template(family)
        assert chat.render(messages, thinking=False).prompt == chat.render(messages).prompt


def test_the_qwen3_soft_switch_for_templates_that_know_only_it():
    # A template that mentions /no_think but not the enable_thinking argument (none of the shipped
    # ones above does): the switch goes at the end of the last user message, as Qwen3 documents it.
    source = (
        "{# /think and /no_think switch reasoning #}{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n"
        "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
    chat = ChatTemplate(source)
    off = chat.render([{"role": "system", "content": "Rules."}, {"role": "user", "content": "Hi"}], thinking=False)
    assert "<|user|>Hi /no_think\n" in off.prompt and off.switch == "/no_think"
    assert chat.render([{"role": "user", "content": "Hi"}]).prompt == "<|user|>Hi\n<|assistant|>"


def test_llama_templates_get_todays_date_and_tojson_keeps_unicode(messages):
    from datetime import datetime

    prompt = template("llama3.2").render(messages).prompt
    assert f"Today Date: {datetime.now().strftime('%d %b %Y')}" in prompt  # strftime_now, as transformers gives it
    chinese = [{"role": "user", "content": "文档里说了什么？"}]
    assert "文档里说了什么？" in template("qwen2.5").render(chinese).prompt


def test_the_thinking_budget_follows_tags_split_across_pieces():
    budget = ThinkingBudget(3)
    for piece in ["Let", " me", " <th", "ink>", "a", "b"]:
        budget.feed(piece)
    assert budget.inside and budget.spent == 2 and not budget.exhausted
    budget.feed("c")
    assert budget.exhausted
    budget.closed()
    for piece in ["\n</", "think>", "\n\nThe answer"]:
        budget.feed(piece)
    assert not budget.inside and budget.tokens == 3
    opened = ThinkingBudget(None, inside=True)  # the template opened <think>; no cap
    for piece in ["x"] * 50 + ["</think>", "done"]:
        opened.feed(piece)
    assert not opened.exhausted and not opened.inside and opened.tokens == 51


# -- the in-process backend renders through this module, on the bundled model ---------------------


@pytest.mark.models
def test_llama_cpp_renders_the_gguf_template_through_this_renderer(bundled_llm, messages):
    assert isinstance(bundled_llm._template, ChatTemplate)
    assert bundled_llm._template.source == bundled_llm.info.chat_template
    rendered = bundled_llm._template.render(messages)
    assert rendered.prompt.startswith("<|im_start|>system\n" + messages[0]["content"] + "<|im_end|>\n")
    assert rendered.prompt.endswith("<|im_start|>assistant\n")
    request = ChatRequest(messages, max_tokens=40, temperature=0.0)
    answer = "".join(bundled_llm.stream_chat(request))
    assert answer.strip() and request.stats.finish_reason in ("stop", "length")
    tokens = bundled_llm._prompt_tokens(bundled_llm._load(), rendered.prompt)
    assert request.stats.prompt_tokens == len(tokens)  # exactly this rendering was decoded


def template_path(name: str) -> Path:
    return TEMPLATES / name

"""Chat templates as the models ship them: a GGUF's own Jinja template, rendered the way Hugging Face
(transformers' `apply_chat_template`) and llama.cpp (`--jinja`) render it.

- One sandboxed jinja2 environment (`ImmutableSandboxedEnvironment`, `trim_blocks`, `lstrip_blocks`,
  `loopcontrols`, a pass-through `{% generation %}`), with the globals templates call:
  `raise_exception`, `strftime_now`, `tojson` (non-ASCII kept, as transformers writes it). Each render
  gets `messages`, `bos_token`, `eos_token`, `add_generation_prompt=True`, `tools=None` and the extra
  template arguments (`enable_thinking`, ...).
- Families without a system role get DocDesk's instructions at the start of the first user turn.
  Which ones is found by rendering, never by name: the template raised (Gemma 2: "System role not
  supported"), or the system text is missing from what it wrote. Gemma 3 folds the system message
  into the first user turn itself, and is left to do so.
- Thinking (`ChatRequest.thinking`): None renders the template's default; True or False is passed
  as `enable_thinking` (Qwen3, SmolLM3, and llama.cpp's own templates read it). A template that
  does not read `enable_thinking` but knows Qwen3's soft switch (its text has `/no_think` or
  `/think`) gets the switch appended to the last user message instead. A template that opens
  `<think>` itself (DeepSeek-R1 distills, QwQ) while thinking is off gets the block closed at once
  ("\\n</think>\\n\\n" after the prompt), as llama-server's `--reasoning-budget 0` does.
- `ThinkingBudget` follows `<think>…</think>` in the text a model writes, so that the in-process
  backend can force the close when the budget is spent (budget forcing).

jinja2 comes with llama-cpp-python (requirements.lock); it is imported when a template is compiled.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.backends.capabilities import Reasoning
from engine.backends.template_limits import ChatTemplateError, TemplateOverrun

__all__ = ["ChatTemplate", "ChatTemplateError", "TemplateOverrun", "RenderedPrompt", "ThinkingBudget"]

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
FORCED_CLOSE = "\n</think>\n\n"  # what a spent budget (or thinking off) writes into the generation
SYSTEM_JOIN = "\n\n"  # between DocDesk's instructions and the first user turn, as Gemma 3 joins them


@dataclass(frozen=True)
class RenderedPrompt:
    prompt: str
    system_in_user: bool = False  # the system instructions were put into the first user turn
    thinking_open: bool = False  # the prompt ends inside <think>: what the model writes first is thinking
    switch: str = ""  # the soft switch appended to the last user message ("/no_think", "/think"), if any


def _raise_exception(message: str):
    from jinja2.exceptions import TemplateError

    raise TemplateError(message)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def _tojson(value: Any, ensure_ascii: bool = False, indent=None, separators=None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _environment():
    import jinja2
    import jinja2.ext

    from engine.backends.template_limits import _bounded_filter, bounded_environment_class

    class GenerationBlocks(jinja2.ext.Extension):
        """transformers' `{% generation %}…{% endgeneration %}` (it marks the assistant's tokens): kept as text."""

        tags = {"generation"}

        def parse(self, parser):
            parser.stream.skip(1)
            return parser.parse_statements(("name:endgeneration",), drop_needle=True)

    env = bounded_environment_class()(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationBlocks, jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = _bounded_filter("tojson", _tojson)
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


def ends_inside_think(text: str) -> bool:
    """Whether `text` leaves a <think> block open (the template opened it for the model)."""
    return text.rfind(THINK_OPEN) > text.rfind(THINK_CLOSE)


class ChatTemplate:
    """One model's template, compiled once; `render()` for each request."""

    def __init__(self, source: str, bos_token: str = "", eos_token: str = "") -> None:
        from jinja2.exceptions import TemplateError

        self.source, self.bos_token, self.eos_token = source, bos_token, eos_token
        try:
            self._template = _environment().from_string(source)
        except TemplateError as exc:
            raise ChatTemplateError(f"the model's chat template is not valid Jinja: {exc}") from exc
        except (RecursionError, MemoryError) as exc:  # nesting thousands deep
            raise ChatTemplateError(f"the model's chat template cannot be compiled: {type(exc).__name__}") from exc

    @property
    def reads_enable_thinking(self) -> bool:
        return "enable_thinking" in self.source

    @property
    def soft_switches(self) -> bool:
        """Whether the template knows Qwen3's `/think` and `/no_think` soft switches."""
        return re.search(r"(?<![<\w])/(?:no_)?think\b", self.source) is not None  # not the </think> tag

    @property
    def stops(self) -> list[str]:
        """The stop strings the template implies (its end-of-sequence text, as llama-cpp-python used)."""
        return [self.eos_token] if self.eos_token else []

    def _render(self, messages: list[dict], kwargs: dict, cancel=None) -> str:
        """The template's output, within a RenderBudget (time, size, `cancel`: Stop, Ctrl-C)."""
        from jinja2.exceptions import TemplateError

        from engine.backends.template_limits import RenderBudget, output_cap

        budget = RenderBudget(output_cap(messages), cancel=cancel)
        pieces: list[str] = []
        try:
            with budget.active():
                for piece in self._template.generate(
                    messages=messages,
                    bos_token=self.bos_token,
                    eos_token=self.eos_token,
                    add_generation_prompt=True,
                    tools=None,
                    **kwargs,
                ):
                    budget.wrote(piece)
                    pieces.append(piece)
        except ChatTemplateError:
            raise
        except (TemplateError, TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            raise ChatTemplateError(f"the model's chat template cannot render this conversation: {exc}") from exc
        except (RecursionError, MemoryError, OverflowError, ArithmeticError) as exc:
            raise TemplateOverrun(f"the model's chat template was stopped: {type(exc).__name__} {exc}") from exc
        return "".join(pieces)

    def render(self, messages: list[dict], thinking: bool | None = None, cancel=None, **kwargs: Any) -> RenderedPrompt:
        """The prompt for `messages` (system, then alternating user/assistant), ending where the
        assistant's answer starts; `thinking` as the module docstring says; `cancel` (an Event)
        stops the render as its time budget does."""
        messages = [dict(m) for m in messages]
        switch = ""
        if thinking is not None and self.reads_enable_thinking:
            kwargs.setdefault("enable_thinking", thinking)
        elif thinking is not None and self.soft_switches:
            switch = "/think" if thinking else "/no_think"
            last = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
            if last is not None:
                messages[last]["content"] = f"{messages[last]['content']} {switch}"
        prompt, moved = self._render_with_system(messages, kwargs, cancel)
        thinking_open = ends_inside_think(prompt)
        if thinking is False and thinking_open:
            prompt, thinking_open = prompt + FORCED_CLOSE, False
        return RenderedPrompt(prompt, moved, thinking_open, switch)

    def _render_with_system(self, messages: list[dict], kwargs: dict, cancel=None) -> tuple[str, bool]:
        system = messages[0] if messages and messages[0].get("role") == "system" else None
        try:
            prompt = self._render(messages, kwargs, cancel)
        except TemplateOverrun:
            raise  # not the system role's fault: rendering again would only spend the budget twice
        except ChatTemplateError:
            if system is None:
                raise
            prompt = None
        if system is None or (prompt is not None and str(system["content"]).strip() in prompt):
            return prompt, False
        return self._render(fold_system(messages), kwargs, cancel), True


def template_reasoning(source: str, thinking: bool | None) -> Reasoning:
    """How a model with this chat template gives its reasoning when DocDesk renders it, for the
    [llm] thinking setting: none when told not to think; after a <think> the template opened
    (DeepSeek-R1 distills, QwQ); else tagged, if it thinks at all. Rendered once, without tokens."""
    if thinking is False:
        return Reasoning.NONE
    try:
        probe = ChatTemplate(source).render([{"role": "user", "content": "?"}], thinking=thinking)
    except ChatTemplateError:
        return Reasoning.TAGGED  # the model's load reports the broken template
    return Reasoning.OPENED if probe.thinking_open else Reasoning.TAGGED


def fold_system(messages: list[dict]) -> list[dict]:
    """The conversation without its system message, whose text starts the first user turn instead."""
    system, rest = messages[0], [dict(m) for m in messages[1:]]
    first_user = next((m for m in rest if m.get("role") == "user"), None)
    if first_user is None:
        return [{"role": "user", "content": system["content"]}, *rest]
    first_user["content"] = f"{system['content']}{SYSTEM_JOIN}{first_user['content']}"
    return rest


class ThinkingBudget:
    """Counts the tokens a model writes inside <think>…</think> and says when the budget is spent.

    Feed it each token's text as it is shown (the tags may come split over several tokens, or a
    few tokens late); `inside` says whether the model is thinking now, `spent` how many tokens the
    current block has taken, `tokens` how many all blocks took. A budget of None never runs out.
    """

    def __init__(self, budget: int | None, inside: bool = False) -> None:
        self.budget = budget
        self.inside = inside
        self.spent = 0
        self.tokens = 0
        self._tail = ""  # the end of the text so far, for a tag split across pieces

    def feed(self, text: str) -> None:
        """One token, with the text it let through ("" when none)."""
        if self.inside:
            self.spent += 1
            self.tokens += 1
        if not text:
            return
        joined = self._tail + text
        fresh = len(self._tail)  # a tag counts only once: when it ends in the new text
        opened = max((i for i in _find_all(joined, THINK_OPEN) if i + len(THINK_OPEN) > fresh), default=-1)
        closed = max((i for i in _find_all(joined, THINK_CLOSE) if i + len(THINK_CLOSE) > fresh), default=-1)
        if opened > closed:
            self.inside, self.spent = True, 0
        elif closed > opened:
            self.inside = False
        self._tail = joined[-(len(THINK_CLOSE) - 1) :]

    @property
    def exhausted(self) -> bool:
        return self.inside and self.budget is not None and self.spent >= self.budget

    def closed(self) -> None:
        """The close was forced into the generation."""
        self.inside, self._tail = False, ""


def _find_all(text: str, needle: str) -> list[int]:
    found, start = [], text.find(needle)
    while start >= 0:
        found.append(start)
        start = text.find(needle, start + 1)
    return found

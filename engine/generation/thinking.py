"""Thinking models: a reply's reasoning kept apart from its answer, as the reply streams.

Three ways reasoning arrives, and one splitter for all of them:

1. In the text, tagged: `<think>…</think>` then the answer (Qwen3, QwQ, DeepSeek-R1 through a
   server that does not parse reasoning, or in process).
2. In the text with the opening tag already written by the chat template (the prompt ends with
   `<think>`): only `…</think>` then the answer arrives. Where the backend says the model may
   think, text before any tag is held as reasoning until `</think>` shows it was (the answer
   follows) or the reply ends without one (it was the answer all along, unless the token budget
   ended it: then it was reasoning cut short). Where nobody expected thinking and `</think>`
   comes anyway, what was streamed as the answer is taken back (`Piece.restart`).
3. Apart from the text: OpenAI-compatible `reasoning_content` deltas (llama-server's
   --reasoning-format, vLLM's reasoning parsers), which backends yield as ReasoningPiece.

The answer is what follows the reasoning; what the window shows as the reply, what is cited,
checked, repaired, cached, stored and returned is that text alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.backends.base import Backend, ChatRequest, ReasoningPiece

OPEN, CLOSE = "<think>", "</think>"
STRAY = re.compile(r"</?think>")
# Model names that think by default when nobody turned it off (an OpenAI-compatible server's model).
THINKING_NAMES = re.compile(r"qwq|deepseek-?r1|\br1\b|qwen-?3|thinking|reason|magistral|gpt-oss|phi-4-reasoning", re.I)


class Growing:
    """Text that grows piece by piece in linear time (a str attribute `+=` copies it whole every
    time: 10 MB in 8-byte pieces would copy terabytes); `str()` joins it once and keeps that.
    Small pieces are gathered into blocks of BLOCK characters, so `tail` touches a few parts."""

    BLOCK = 1024
    __slots__ = ("_blocks", "_recent", "_recent_size", "_size")

    def __init__(self, text: str = "") -> None:
        self._blocks: list[str] = [text] if text else []
        self._recent: list[str] = []
        self._recent_size = 0
        self._size = len(text)

    def add(self, text: str) -> None:
        if not text:
            return
        self._recent.append(text)
        self._recent_size += len(text)
        self._size += len(text)
        if self._recent_size >= self.BLOCK:
            self._blocks.append("".join(self._recent))
            self._recent, self._recent_size = [], 0

    def __len__(self) -> int:
        return self._size

    def __str__(self) -> str:
        if self._recent:
            self._blocks.append("".join(self._recent))
            self._recent, self._recent_size = [], 0
        if len(self._blocks) > 1:
            self._blocks = ["".join(self._blocks)]
        return self._blocks[0] if self._blocks else ""

    def tail(self, size: int) -> str:
        """The last `size` characters, without joining the rest."""
        if size <= 0:
            return ""
        taken, count = ["".join(self._recent)], self._recent_size
        for block in reversed(self._blocks):
            if count >= size:
                break
            taken.append(block)
            count += len(block)
        return "".join(reversed(taken))[-size:]


@dataclass(frozen=True)
class Piece:
    """A piece of a reply: reasoning or answer text. `restart`: what was streamed so far, answer
    and reasoning, was taken for the wrong one (a `</think>` nobody expected; reasoning held that
    was the answer): a display drops both and shows what follows, which says it again rightly."""

    text: str
    reasoning: bool = False
    restart: bool = False


class ThinkingSplitter:
    """Feed it the backend's pieces as they come (`feed`), then `finish`; it returns the Pieces
    to pass on, and keeps the whole `reasoning` and `answer`."""

    def __init__(self, may_think: bool = False) -> None:
        self.may_think = may_think
        self.state = "start"  # start | reasoning | held (reasoning, opened before the reply) | answer
        self.pending = ""  # text not yet passed on: a tag may be cut between two pieces
        self.reasoning_text = Growing()
        self.answer_text = Growing()
        self.tagged = False  # the reply opened or closed a tag, or a server sent reasoning apart
        self.apart = False  # a server sent the reasoning apart: its text is the answer alone
        self.held = Growing()  # text held as reasoning that may prove to be the answer
        self.depth = 0  # <think> tags open inside the reasoning (nested ones close in turn)

    # The whole texts (joined once when read; the hot path reads lengths and tails instead).
    @property
    def reasoning(self) -> str:
        return str(self.reasoning_text)

    @reasoning.setter
    def reasoning(self, text: str) -> None:
        self.reasoning_text = Growing(text)

    @property
    def answer(self) -> str:
        return str(self.answer_text)

    @answer.setter
    def answer(self, text: str) -> None:
        self.answer_text = Growing(text)

    # -- feeding ------------------------------------------------------------------------------
    def feed(self, piece: str) -> list[Piece]:
        if isinstance(piece, ReasoningPiece):
            self.tagged = self.apart = True
            self.reasoning_text.add(str(piece))
            return [Piece(str(piece), reasoning=True)] if piece else []
        self.pending += piece
        out: list[Piece] = []
        while self.pending:
            moved = self._step(out)
            if not moved:
                break
        return out

    def _step(self, out: list[Piece]) -> bool:
        """Pass on what can be passed on now; False when it must wait for more text."""
        if self.state == "start":
            head = self.pending.lstrip()
            if not head or OPEN.startswith(head) and len(head) < len(OPEN):
                return False  # only blank so far, or a tag's beginning
            if head.startswith(OPEN):
                self.tagged = True
                self.state, self.pending = "reasoning", head[len(OPEN) :]
                return True
            self.state = "held" if self.may_think and not self.apart else "answer"
            return True
        if self.state in ("reasoning", "held"):
            close, opened = self.pending.find(CLOSE), self.pending.find(OPEN)
            if opened >= 0 and (close < 0 or opened < close):  # a thought inside the thought: still reasoning
                self._reason(self.pending[:opened], out)
                self.depth += 1
                self.pending = self.pending[opened + len(OPEN) :]
                return True
            if close >= 0:
                self._reason(self.pending[:close], out)
                self.tagged = True
                self.pending = self.pending[close + len(CLOSE) :]
                if self.depth > 0:  # a nested thought closed: the outer one goes on
                    self.depth -= 1
                    return True
                self.state, self.pending = "answer", self.pending.lstrip()
                return True
            keep = max(_partial_tag(self.pending, CLOSE), _partial_tag(self.pending, OPEN))
            self._reason(self.pending[: len(self.pending) - keep], out)
            self.pending = self.pending[len(self.pending) - keep :]
            return False
        # answer
        at = self.pending.find(CLOSE)
        opened = self.pending.find(OPEN)
        if at >= 0 and not self.tagged and (opened < 0 or at < opened):  # unexpected: everything so far was reasoning
            self.reasoning_text.add(self.answer + self.pending[:at])
            self.answer, self.tagged = "", True
            self.pending = self.pending[at + len(CLOSE) :].lstrip()
            out.append(Piece("", restart=True))
            out.append(Piece(self.reasoning, reasoning=True))
            return True
        if opened >= 0 and (at < 0 or opened < at):
            # The model (or a server that switched style) thinks again mid-answer: reasoning until it closes.
            self._answer(STRAY.sub("", self.pending[:opened]), out)
            self.tagged, self.state = True, "reasoning"
            self.pending = self.pending[opened + len(OPEN) :]
            return True
        # A closing tag with nothing open is no answer: dropped, even cut in two.
        keep = max(_partial_tag(self.pending, CLOSE), _partial_tag(self.pending, OPEN))
        self._answer(STRAY.sub("", self.pending[: len(self.pending) - keep]), out)
        self.pending = self.pending[len(self.pending) - keep :]
        return False

    def _answer(self, text: str, out: list[Piece]) -> None:
        if not len(self.answer_text):
            text = text.lstrip()
        if text:
            self.answer_text.add(text)
            out.append(Piece(text))

    def _reason(self, text: str, out: list[Piece]) -> None:
        if self.state == "reasoning" and not len(self.reasoning_text):
            text = text.lstrip()
        if text:
            self.reasoning_text.add(text)
            if self.state == "held":
                self.held.add(text)
            out.append(Piece(text, reasoning=True))

    # -- the end ----------------------------------------------------------------------------
    def finish(self, finish_reason: str = "stop") -> list[Piece]:
        """The reply ended (`finish_reason` as the backend's stats say): what is still held."""
        out: list[Piece] = []
        rest, self.pending = self.pending, ""
        if self.state == "start":
            if rest.strip():
                self.answer_text.add(rest.strip())
                out.append(Piece(rest.strip()))
        elif self.state == "held" and finish_reason != "length":
            # No </think> came: the model did not think; what was held as reasoning is the answer.
            held = str(self.held)
            text = (held + rest).strip()
            self.reasoning = self.reasoning[: len(self.reasoning_text) - len(held)]
            self.answer = text
            out.append(Piece("", restart=True))
            if self.reasoning:
                out.append(Piece(self.reasoning, reasoning=True))
            if text:
                out.append(Piece(text))
        elif self.state in ("reasoning", "held"):
            self._reason(rest, out)  # the budget ended it mid-thought: no answer was written
        elif rest := STRAY.sub("", rest):
            self.answer_text.add(rest)
            out.append(Piece(rest))
        return out

    @property
    def thought_unfinished(self) -> bool:
        """The reply ended inside its reasoning: the model wrote no answer."""
        thinking = self.state in ("reasoning", "held") or (self.apart and self.state == "start")
        return thinking and not len(self.answer_text)


def _partial_tag(text: str, tag: str) -> int:
    """How many characters at the end of `text` could be the beginning of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


def split(text: str, may_think: bool = False, finish_reason: str = "stop") -> tuple[str, str]:
    """A whole reply as (reasoning, answer)."""
    splitter = ThinkingSplitter(may_think)
    splitter.feed(text)
    splitter.finish(finish_reason)
    return splitter.reasoning.strip(), splitter.answer.strip()


def may_think(backend: Backend, request: ChatRequest) -> bool:
    """Whether a reply may begin inside its reasoning with no tag (the template opened it): the
    request did not turn thinking off, and the backend declares that its model thinks (or, where
    it does not know, the model is named like one that does)."""
    if request.thinking is False:
        return False
    says = backend.capabilities.thinks
    if says is not None:
        return says
    return request.thinking is True or bool(THINKING_NAMES.search(str(backend.model or "")))

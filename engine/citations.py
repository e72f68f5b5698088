"""Citations: how an answer cites its sources, which sources a reader is shown, and the
citations the model forgot.

An answer cites source n as `[n]`, several at once as `[1, 2]` (or `[1，2]`, a Chinese comma), as
the answer prompt asks; CITATION (engine/prompts.py, beside that prompt) is the pattern for
everything that reads citations (the engine, the window's links).

Small models often copy from a source without writing `[n]`. Such a sentence is matched
against the sources by its keyword tokens; only a clear match (most of its tokens in one
source) is cited, so an added citation is always one a reader can check.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.prompts import CITATION, NUMBER
from ingest.keywords import query_tokens

if TYPE_CHECKING:
    from engine.retrieval.context import Source
    from ingest.records import CitedSource

# A sentence ends at .!? before whitespace (not inside "3.11" or "config.toml"), a CJK stop, or a line end.
_SENTENCE = re.compile(r"[^\n]*?(?:[.!?]+(?=\s|$)|[。！？]+|(?=\n)|$)[ \t]*\n*")
MIN_TOKENS = 4
MIN_SHARE = 0.6


def cited_numbers(text: str, count: int) -> list[int]:
    """The source numbers an answer cites, in order of first mention; numbers out of range are dropped."""
    found: list[int] = []
    for match in CITATION.finditer(text):
        for part in NUMBER.findall(match.group(1)):
            n = int(part)
            if 1 <= n <= count and n not in found:
                found.append(n)
    return found


def shown_sources(sources: list[CitedSource]) -> list[CitedSource]:
    """The sources a reader is shown under an answer: those it cites, or all it was given when it cites none."""
    return [s for s in sources if s.cited] or list(sources)


def attribute(text: str, sources: list[Source]) -> str:
    if not sources:
        return text
    source_tokens = [set(query_tokens(s.text)) for s in sources]
    out: list[str] = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group()
        if not sentence:
            continue
        tokens = set(query_tokens(sentence))
        if len(tokens) >= MIN_TOKENS and not CITATION.search(sentence):
            shares = [len(tokens & known) / len(tokens) for known in source_tokens]
            best = max(range(len(sources)), key=shares.__getitem__)
            if shares[best] >= MIN_SHARE:
                body = sentence.rstrip()
                end = len(body.rstrip(".!?。！？"))
                sentence = f"{body[:end]} [{sources[best].n}]{body[end:]}{sentence[len(body) :]}"
        out.append(sentence)
    return "".join(out)

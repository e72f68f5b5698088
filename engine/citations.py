"""Citations the model forgot: a sentence that repeats a source almost word for word gets its number.

Small models often copy from a source without writing `[n]`. Such a sentence is matched
against the sources by its keyword tokens; only a clear match (most of its tokens in one
source) is cited, so an added citation is always one a reader can check.
"""

from __future__ import annotations

import re

from ingest.keywords import query_tokens

from .context import Source

# A sentence ends at .!? before whitespace (not inside "3.11" or "config.toml"), a CJK stop, or a line end.
_SENTENCE = re.compile(r"[^\n]*?(?:[.!?]+(?=\s|$)|[。！？]+|(?=\n)|$)[ \t]*\n*")
_HAS_CITATION = re.compile(r"\[\d+(?:\s*[,，]\s*\d+)*\]")
MIN_TOKENS = 4
MIN_SHARE = 0.6


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
        if len(tokens) >= MIN_TOKENS and not _HAS_CITATION.search(sentence):
            shares = [len(tokens & known) / len(tokens) for known in source_tokens]
            best = max(range(len(sources)), key=shares.__getitem__)
            if shares[best] >= MIN_SHARE:
                body = sentence.rstrip()
                end = len(body.rstrip(".!?。！？"))
                sentence = f"{body[:end]} [{sources[best].n}]{body[end:]}{sentence[len(body) :]}"
        out.append(sentence)
    return "".join(out)

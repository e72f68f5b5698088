"""The keyword tokenizer behind the FTS5 index, shared by indexing and queries.

FTS5's own tokenizers cannot find "驱动" inside "驱动版本" (a CJK run has no spaces,
so it is one token). DocDesk therefore writes a token column itself: Latin-script words
lower-cased, CJK runs as overlapping character bigrams plus single characters.
"""

from __future__ import annotations

import re

from ingest.cjk import CJK_RANGES

_TOKEN = re.compile(rf"[{CJK_RANGES}]+|[^\W_{CJK_RANGES}]+")
_CJK_RUN = re.compile(rf"[{CJK_RANGES}]")

# Query-side only: words that match nearly every passage and only cost time.
_STOPWORDS = frozenset(
    """a an and are as at be by can do does for from had has have how i if in is it its of on or
    that the their this to was were what when where which who why will with you your
    der die das und ist ein eine zu den von mit sich des auf für im dem nicht es
    le la les et est un une des du de en que qui""".split()
)


def _cjk_tokens(run: str, with_singles: bool) -> list[str]:
    if len(run) == 1:
        return [run]
    bigrams = [run[i : i + 2] for i in range(len(run) - 1)]
    return bigrams + list(run) if with_singles else bigrams


def index_tokens(text: str) -> str:
    """The token column for a passage: a space-separated string for FTS5."""
    tokens: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        run = match.group()
        tokens.extend(_cjk_tokens(run, True) if _CJK_RUN.match(run) else [run])
    return " ".join(tokens)


def query_tokens(text: str) -> list[str]:
    """Distinct tokens of a query, in order; bigrams only for CJK runs, no stopwords."""
    tokens: list[str] = []
    for match in _TOKEN.finditer(text.lower()):
        run = match.group()
        if _CJK_RUN.match(run):
            tokens.extend(_cjk_tokens(run, False))
        elif run not in _STOPWORDS:
            tokens.append(run)
    return list(dict.fromkeys(tokens))


# Ranking costs FTS5 about a microsecond per matching passage (bm25 is scored for every match
# before ORDER BY ... LIMIT can cut), so at a million passages "und" alone takes ~0.5 s. A query
# keeps its rarest words while the passages they appear in, added up, stay within this budget.
POSTING_BUDGET = 20_000


def affordable_tokens(tokens: list[str], passages_with: dict[str, int], budget: int = POSTING_BUDGET) -> list[str]:
    """The query's tokens that keyword search can rank quickly, in query order.

    Rarest first, while the summed passage counts stay within `budget`; the rarest word is always
    kept, whatever its count, so a query of common words still gets keyword candidates. Words that
    no passage contains cost nothing and are kept (they may be in a passage written since)."""
    if sum(passages_with.get(t, 0) for t in tokens) <= budget:
        return tokens
    kept: set[str] = set()
    spent = 0
    for token in sorted(tokens, key=lambda t: passages_with.get(t, 0)):
        cost = passages_with.get(token, 0)
        if kept and spent + cost > budget:
            break
        kept.add(token)
        spent += cost
    return [t for t in tokens if t in kept]


def fts_match_expression(tokens: list[str]) -> str:
    """An FTS5 MATCH string that ORs the tokens (each quoted, so none is an operator)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)

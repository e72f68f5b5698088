"""Decode tokens/s on a GPU, predicted from its memory bandwidth and the runs measured here.

A token reads every weight once, so seconds per token = bytes / (bandwidth x efficiency) + a fixed
cost per token. With runs of one runtime on two cards both are fitted (a card with slow memory
spends more of each token reading weights than a fast one, so one share of bandwidth taken from an
H200 would under-predict a V100); with one card only the share of bandwidth it reached is used and
the fixed cost is taken as none. The table: decode_speed.toml. What this returns is a prediction,
and every line that shows it says so.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

TABLE = Path(__file__).with_name("decode_speed.toml")


@lru_cache(maxsize=1)
def table() -> dict:
    return tomllib.loads(TABLE.read_text(encoding="utf-8"))


def bandwidth_gbs(card_name: str) -> float | None:
    """The card's memory bandwidth (GB/s) from the datasheet table; None for a card it lacks."""
    name = card_name.lower()
    keys = [k for k in table()["bandwidth"] if k.lower() in name]
    return float(table()["bandwidth"][max(keys, key=len)]) if keys else None


@dataclass(frozen=True)
class Fit:
    runtime: str
    efficiency: float  # the share of bandwidth the weights are read at
    fixed_ms: float  # per token, whatever the card
    cards: tuple[str, ...]  # the cards measured
    sources: tuple[str, ...]


@cache
def fit(runtime: str) -> Fit | None:
    """Efficiency and fixed cost for `runtime` from its measured runs (None: none measured)."""
    runs = [r for r in table()["measured"] if r["runtime"] == runtime and bandwidth_gbs(r["card"])]
    if not runs:
        return None
    # x: milliseconds to read the weights at full bandwidth; y: measured milliseconds per token
    points = [(r["bytes"] / 1e9 / bandwidth_gbs(r["card"]) * 1000, 1000 / r["tok_s"]) for r in runs]
    cards = tuple(r["card"] for r in runs)
    sources = tuple(r["source"] for r in runs)
    xs = {round(x, 6) for x, _ in points}
    if len(xs) >= 2:  # y = x / efficiency + fixed, least squares
        n = len(points)
        mx = sum(x for x, _ in points) / n
        my = sum(y for _, y in points) / n
        slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
        fixed = my - slope * mx
        if slope >= 1 and fixed >= 0:  # a physical fit: no faster than the memory, no negative cost
            return Fit(runtime, 1 / slope, fixed, cards, sources)
    share = sum(x / y for x, y in points) / len(points)
    return Fit(runtime, share, 0.0, cards, sources)


@dataclass(frozen=True)
class Prediction:
    runtime: str
    card: str
    tok_s: float
    bandwidth_limit_tok_s: float  # every byte at the datasheet's bandwidth: no runtime beats it
    text: str


def predict(card_name: str, bytes_per_token: int, runtime: str) -> Prediction | None:
    """Predicted decode tokens/s, one answer at a time (None: the card's bandwidth or the
    runtime's measurements are not known)."""
    bandwidth = bandwidth_gbs(card_name)
    found = fit(runtime)
    if not bandwidth or not found or bytes_per_token <= 0:
        return None
    read_ms = bytes_per_token / 1e9 / bandwidth * 1000
    tok_s = 1000 / (read_ms / found.efficiency + found.fixed_ms)
    limit = 1000 / read_ms
    how = (
        f"{found.efficiency:.0%} of bandwidth + {found.fixed_ms:.1f} ms a token, fitted to {' and '.join(found.cards)}"
        if found.fixed_ms
        else f"at the {found.efficiency:.0%} of bandwidth reached on {' and '.join(found.cards)}"
    )
    text = (
        f"{runtime}: ~{tok_s:.0f} tokens/s predicted for one answer on {card_name} ({bandwidth:.0f} GB/s, "
        f"{bytes_per_token / 1e9:.1f} GB a token; {how}; the memory's limit {limit:.0f}) - predicted, not measured"
    )
    return Prediction(runtime, card_name, tok_s, limit, text)

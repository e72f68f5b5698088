"""Plain records passed between the ingest stages."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Page:
    """One citable page. `number` is 1-based; synthetic for formats without pages."""

    number: int
    text: str


@dataclass
class ReadResult:
    """What a reader extracted from one file, before chunking."""

    format: str
    pages: list[Page]
    title: str = ""
    synthetic_pages: bool = False
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Passage:
    """The retrieval unit: embedded, searched and cited."""

    block: int
    ordinal: int
    start: int
    end: int
    page: int
    page_end: int
    text: str


@dataclass(frozen=True)
class Block:
    """~8k tiktoken tokens of consecutive text; feeds summaries and widens context."""

    ordinal: int
    start: int
    end: int
    page: int
    page_end: int
    tokens: int
    text: str


@dataclass
class Chunks:
    blocks: list[Block]
    passages: list[Passage]

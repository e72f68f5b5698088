"""Plain records passed between the ingest stages."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageOcr:
    """How a page's text was recognised from its image: the mean line confidence, the degrees
    the image was turned to read it, and each line as (start, end, x0, y0, x1, y1, score):
    its offsets in the page text and its box as fractions of the page's width and height."""

    confidence: float
    lines: tuple[tuple[int, int, float, float, float, float, float], ...] = ()
    rotated: int = 0  # the image was turned this many degrees clockwise to read it ...
    skew: float = 0.0  # ... and then this many to level its lines: boxes are of that image


@dataclass(frozen=True)
class Page:
    """One citable page. `number` is 1-based; synthetic for formats without pages."""

    number: int
    text: str
    ocr: PageOcr | None = None  # set when the text comes from OCR of the page image


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


def page_label(page: int, page_end: int | None = None, synthetic: bool = False, language: str = "en") -> str:
    """How DocDesk names pages, everywhere: "p. 12", "pp. 12–19", "第 12–19 页"; "p. ~2" where
    the pages were made up (about 3,000 characters each) for a format without pages."""
    end = page if page_end is None else page_end
    a, b = (f"~{page}", f"~{end}") if synthetic else (str(page), str(end))
    if language == "zh":
        return f"第 {a} 页" if end <= page else f"第 {a}–{b} 页"
    return f"p. {a}" if end <= page else f"pp. {a}–{b}"


@dataclass
class CitedSource:
    """A source an answer was given, as it travels to the CLI, the window and the chat history.

    `to_json()` and `from_json()` are its one serialised form (the CLI's --json, stored chats).
    """

    n: int
    doc_id: str
    title: str
    path: str
    page: int  # the page a citation opens: the one holding what matched
    page_end: int
    text: str
    synthetic_pages: bool = False
    span_pages: tuple[int, int] | None = None  # pages of all the quoted text, neighbours included
    cited: bool = False  # the answer cites it
    excerpt: bool = False  # its passage's best window of sentences, not the whole passage

    def __post_init__(self) -> None:
        if self.span_pages is None:
            self.span_pages = (self.page, self.page_end)

    @property
    def name(self) -> str:
        return self.title or self.path

    @property
    def page_label(self) -> str:
        return page_label(self.page, synthetic=self.synthetic_pages)

    @property
    def label(self) -> str:
        return f"[{self.n}] {self.name}, {self.page_label}"

    def to_json(self) -> dict:
        return {
            "n": self.n,
            "doc_id": self.doc_id,
            "title": self.title,
            "path": self.path,
            "page": self.page,
            "page_end": self.page_end,
            "span_pages": list(self.span_pages),
            "page_synthetic": self.synthetic_pages,
            "page_label": self.page_label,
            "text": self.text,
            "cited": self.cited,
            "excerpt": self.excerpt,
        }

    @classmethod
    def from_json(cls, data: dict) -> CitedSource:
        """Also reads what older DocDesk versions stored (no "cited", "page_end" or "excerpt")."""
        page = int(data.get("page") or 1)
        span = data.get("span_pages")
        return cls(
            n=int(data["n"]),
            doc_id=str(data.get("doc_id", "")),
            title=str(data.get("title", "")),
            path=str(data.get("path", "")),
            page=page,
            page_end=int(data.get("page_end") or page),
            text=str(data.get("text", "")),
            synthetic_pages=bool(data.get("page_synthetic", False)),
            span_pages=(int(span[0]), int(span[1])) if span else None,
            cited=bool(data.get("cited", False)),
            excerpt=bool(data.get("excerpt", False)),
        )

"""Progress on stderr when it is not a terminal (cron, a pipe, a log): plain lines, one for each
file, one every few seconds while a long file goes on, never a carriage return."""

from __future__ import annotations

import io

from app.cli.progress import ProgressBar, progress_for
from app.cli.progress_lines import ProgressLines
from ingest.pipeline import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_one_line_a_file_and_one_every_few_seconds_of_a_long_one():
    stream, clock = io.StringIO(), Clock()
    lines = ProgressLines(stream, every_s=5.0, clock=clock)
    lines(Progress("hashing", 0, 2, "/docs/a.md"))  # at once: nothing yet to say
    lines(Progress("done", 1, 2, "/docs/a.md", pages=2, passages=3))
    for second in range(1, 13):  # a long book: pages arrive for 12 seconds
        clock.now += 1
        lines(Progress("reading", 1, 2, "/docs/book.pdf", pages=second * 10, passages=second * 20))
    lines(Progress("failed", 2, 2, "/docs/book.pdf", reason="damaged beyond reading"))
    lines.finish()
    assert stream.getvalue().splitlines() == [
        "1/2 files · 2 pages · 3 passages · indexed /docs/a.md (2 pages, 3 passages)",
        "1/2 files · 2 pages · 3 passages · reading /docs/book.pdf: 50 pages, 100 passages so far",
        "1/2 files · 2 pages · 3 passages · reading /docs/book.pdf: 100 pages, 200 passages so far",
        "2/2 files · 2 pages · 3 passages · failed /docs/book.pdf: damaged beyond reading",
    ]
    assert "\r" not in stream.getvalue()


def test_a_long_folder_walk_says_how_far_it_is():
    stream, clock = io.StringIO(), Clock()
    lines = ProgressLines(stream, every_s=5.0, clock=clock)
    for number in range(3000):
        clock.now += 0.01
        lines(Progress("hashing", number, 3000, f"/docs/{number}.md"))
    assert stream.getvalue().splitlines() == [
        "checking 500/3000 files: /docs/499.md",
        "checking 1000/3000 files: /docs/999.md",
        "checking 1500/3000 files: /docs/1499.md",
        "checking 2000/3000 files: /docs/1999.md",
        "checking 2500/3000 files: /docs/2499.md",
    ]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_on_a_terminal_lines_elsewhere():
    assert isinstance(progress_for(Terminal()), ProgressBar)
    assert isinstance(progress_for(io.StringIO()), ProgressLines)

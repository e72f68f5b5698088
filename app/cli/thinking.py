"""What `docdesk ask` shows while a thinking model thinks."""

from __future__ import annotations

import sys


class ThinkingNote:
    """What `docdesk ask` says while a thinking model thinks: "thinking…" on stderr (its reasoning
    too with --verbose), never on stdout, which holds the answer alone."""

    def __init__(self, show: bool) -> None:
        self.show = show
        self.started = False

    def reasoning(self, text: str) -> None:
        if not self.started:
            self.started = True
            sys.stderr.write("thinking…\n")
        if self.show:
            sys.stderr.write(text)
        sys.stderr.flush()

    def then(self, write):
        """`write`, after a line that ends the reasoning shown on stderr."""

        def answer_text(text: str) -> None:
            if self.started and self.show:
                sys.stderr.write("\n")
                self.show = False
            write(text)

        return answer_text

    def restart(self) -> None:
        """What was printed as the answer was the model's reasoning (a tag nobody expected)."""
        sys.stdout.write("\n")
        sys.stderr.write("(the text above was the model's reasoning; the answer follows)\n")

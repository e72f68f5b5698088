"""Text out of a token stream: UTF-8 pieces joined across token boundaries, and stop strings cut.

The in-process backend decodes token by token; a token's bytes may end inside a UTF-8 character,
and a stop string may arrive split over several tokens. Work per token is proportional to the
piece and the longest stop string, never to the text so far (llama-cpp-python's own completion
loop re-detokenizes the whole prompt and answer at every token).
"""

from __future__ import annotations

import codecs


class StopScanner:
    """Feed token bytes; get back the text that is safe to show, up to the first stop string."""

    def __init__(self, stops: list[str]) -> None:
        self.stops = [s for s in stops if s]
        self._hold = max((len(s) for s in self.stops), default=1) - 1
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""  # text not shown yet: it may be the start of a stop string
        self.stopped = False

    def feed(self, data: bytes) -> str:
        """Text that can be shown now ("" while a character or a possible stop is incomplete)."""
        if self.stopped:
            return ""
        text = self._pending + self._decoder.decode(data)
        cut = min((i for i in (text.find(s) for s in self.stops) if i >= 0), default=-1)
        if cut >= 0:
            self.stopped, self._pending = True, ""
            return text[:cut]
        keep = self._partial_stop(text)
        self._pending = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep]

    def _partial_stop(self, text: str) -> int:
        """Length of the longest tail of text that begins a stop string."""
        for size in range(min(self._hold, len(text)), 0, -1):
            tail = text[-size:]
            if any(s.startswith(tail) for s in self.stops):
                return size
        return 0

    def flush(self) -> str:
        """What is left at the end of the stream: a held-back tail that never became a stop.
        Bytes of a character the stream broke off inside are dropped, not shown as U+FFFD."""
        if self.stopped:
            return ""
        text, self._pending = self._pending, ""
        self._decoder.reset()
        return text

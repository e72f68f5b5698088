"""Where a GGUF header is read from: a local file (`FileSource`, a plain buffered handle: nothing
mapped), or a file on a web server such as the Hugging Face Hub (`HttpRangeSource`, range
requests with deadlines). engine/models/gguf_info.py parses either."""

from __future__ import annotations

from pathlib import Path

from engine.errors import ModelLoadError, ModelNotFound


class FileSource:
    """A GGUF file read from its start (a plain buffered handle: nothing mapped)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.name = self.path.name
        self.size = self.path.stat().st_size
        self._handle = None

    def __enter__(self) -> FileSource:
        self._handle = self.path.open("rb")
        return self

    def __exit__(self, *_exc) -> None:
        self._handle.close()

    def read(self, n: int) -> bytes:
        return self._handle.read(n)


class HttpRangeSource:
    """A GGUF file on a web server (the Hugging Face Hub), read from its start with HTTP range
    requests: first `first` bytes, then blocks twice as large as the last (up to `largest`), so a
    header of a few MB costs a few requests and the weights are never fetched. `requests` lists
    each range asked for. Bounded: `timeout` for connecting and for each read, `total` seconds for
    the whole header (a server that trickles a byte at a time is given up), `ceiling` bytes of
    header at most (read_header refuses a header that would need more)."""

    def __init__(
        self,
        url: str,
        name: str = "",
        first: int = 1 << 20,
        largest: int = 4 << 20,
        timeout: float = 15.0,
        headers=None,
        total: float = 60.0,
        ceiling: int = 64 << 20,
    ) -> None:
        self.url, self.timeout, self.headers = url, timeout, dict(headers or {})
        self.name = name or url.rsplit("/", 1)[-1]
        self.size = 0
        self.requests: list[tuple[int, int]] = []
        self._block, self._largest, self._offset = first, largest, 0
        self._buffer = b""
        self.total, self.ceiling, self._deadline = total, ceiling, 0.0

    def __enter__(self) -> HttpRangeSource:
        import time

        self._deadline = time.monotonic() + self.total
        self._buffer = self._fetch(0, self._block)
        return self

    def __exit__(self, *_exc) -> None:
        self._buffer = b""

    def _fetch(self, start: int, length: int) -> bytes:
        import urllib.error
        import urllib.request

        end = start + length - 1
        if self.size:
            end = min(end, self.size - 1)
            if start > end:
                return b""
        request = urllib.request.Request(self.url, headers={**self.headers, "Range": f"bytes={start}-{end}"})
        self.requests.append((start, end))
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # follows the Hub's redirect
                total = (response.headers.get("Content-Range") or "").rpartition("/")[2]
                if response.status != 206 or not total.isdigit():
                    raise ModelLoadError(f"{self.url} does not answer range requests: cannot read its header alone")
                self.size = int(total)
                return self._body(response, end - start + 1)
        except urllib.error.HTTPError as exc:
            raise ModelNotFound(f"{self.url}: HTTP {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise ModelNotFound(f"cannot reach {self.url}: {getattr(exc, 'reason', exc)}") from exc

    def _body(self, response, length: int) -> bytes:
        """The response read in pieces, each before the whole header's deadline."""
        import time

        body = bytearray()
        while len(body) < length:
            if time.monotonic() > self._deadline:
                raise ModelNotFound(f"{self.url} sent its header too slowly: gave up after {self.total:g} s")
            piece = response.read1(min(1 << 16, length - len(body)))
            if not piece:
                break
            body += piece
        return bytes(body)

    def read(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            if not self._buffer:
                self._block = min(self._block * 2, self._largest)
                self._buffer = self._fetch(self._offset, max(self._block, n - len(out)))
                if not self._buffer:
                    break
            piece = self._buffer[: n - len(out)]
            self._buffer = self._buffer[len(piece) :]
            self._offset += len(piece)
            out += piece
        return bytes(out)

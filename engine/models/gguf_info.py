"""GGUF metadata (architecture, layers, heads, context, chat template) without loading weights.

The header is read with plain buffered reads and the file is closed again: nothing stays mapped.
The `gguf` package's reader keeps a numpy memmap of the whole file alive, and on a GPU build of
llama.cpp a `Llama()` that loaded the same 20 GB file afterwards in the same process died with
SIGSEGV (seen on an H200); DocDesk reads every model before loading it, so this reader must leave
no trace in the process.

The same parser reads any byte source: a file (`FileSource`), or a file on the Hugging Face Hub
through HTTP range requests (`HttpRangeSource`), so a model's shape, and whether it fits, is known
from the first few MB before anything is downloaded.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from engine.errors import ModelLoadError, ModelNotFound

# GGUF value types: id -> struct code (fixed-size scalars); 8 is a string, 9 an array.
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
_KEEP_ARRAYS_UP_TO = 4096  # per-layer values (head counts of some models); vocabularies are skipped
_CHUNK = 1 << 20
# ggml type id -> (values per block, bytes per block), as in ggml's type traits. The header check
# uses it to see that the file holds all its tensor data; a type missing here is not checked.
# (The gguf package has the same table, but importing it pulls numpy and more into the process.)
GGML_BLOCKS = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 40),
    10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
    16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110),
    22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8),
    29: (256, 56), 30: (1, 2), 34: (256, 54), 35: (256, 66), 39: (32, 17), 40: (64, 36), 41: (128, 18),
}  # fmt: skip


@dataclass
class ModelShape:
    """What memory planning and the backends need to know about a model."""

    name: str
    architecture: str
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    context_length: int
    file_bytes: int
    chat_template: str = ""
    source: str = "gguf"  # gguf | hf-config


class _Damaged(Exception):
    pass


class _Cursor:
    """Sequential reads over a file through a small buffer (no mmap, no whole-file read)."""

    def __init__(self, handle, endian: str) -> None:
        self.handle, self.endian = handle, endian
        self.buffer, self.pos, self.consumed = b"", 0, 0

    def _refill(self, n: int) -> None:
        """At least n bytes from the current position in the buffer."""
        rest = self.buffer[self.pos :]
        more = self.handle.read(max(_CHUNK, n - len(rest)))
        self.consumed += self.pos
        self.buffer, self.pos = rest + more, 0
        if n > len(self.buffer):
            raise _Damaged("the file ends inside its header")

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.buffer):
            self._refill(n)
        data = self.buffer[self.pos : self.pos + n]
        self.pos += n
        return data

    def offset(self) -> int:
        return self.consumed + self.pos

    def scalar(self, code: str):
        return struct.unpack(self.endian + code, self.take(struct.calcsize(code)))[0]

    def string(self) -> str:
        length = self.scalar("Q")
        if length > 1 << 30:
            raise _Damaged(f"a string of {length} bytes")
        return self.take(length).decode("utf-8", "replace")

    def value(self, kind: int):
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item, count = self.scalar("I"), self.scalar("Q")
            if count > _KEEP_ARRAYS_UP_TO:
                self.skip_array(item, count)
                return None
            return [self.value(item) for _ in range(count)]
        raise _Damaged(f"unknown value type {kind}")

    def skip_array(self, item: int, count: int) -> None:
        if item in _SCALARS:
            self.take(struct.calcsize(_SCALARS[item]) * count)
        elif item == _STRING:  # vocabularies: 150k strings, walked in the buffer without slicing
            length_at = struct.Struct(self.endian + "Q").unpack_from
            for _ in range(count):
                if self.pos + 8 > len(self.buffer):
                    self._refill(8)
                end = self.pos + 8 + length_at(self.buffer, self.pos)[0]
                if end > len(self.buffer):
                    self._refill(end - self.pos)
                    end = self.pos + 8 + length_at(self.buffer, self.pos)[0]
                self.pos = end
        else:
            for _ in range(count):
                self.value(item)


def _tensor_bytes(dims: list[int], ggml_type: int) -> int | None:
    """Bytes of one tensor, or None for a type not in GGML_BLOCKS."""
    if ggml_type not in GGML_BLOCKS:
        return None
    block, size = GGML_BLOCKS[ggml_type]
    elements = 1
    for d in dims:
        elements *= d
    return elements // block * size


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
    each range asked for."""

    def __init__(
        self,
        url: str,
        name: str = "",
        first: int = 1 << 20,
        largest: int = 4 << 20,
        timeout: float = 30.0,
        headers=None,
    ) -> None:
        self.url, self.timeout, self.headers = url, timeout, dict(headers or {})
        self.name = name or url.rsplit("/", 1)[-1]
        self.size = 0
        self.requests: list[tuple[int, int]] = []
        self._block, self._largest, self._offset = first, largest, 0
        self._buffer = b""

    def __enter__(self) -> HttpRangeSource:
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
                return response.read(end - start + 1)
        except urllib.error.HTTPError as exc:
            raise ModelNotFound(f"{self.url}: HTTP {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise ModelNotFound(f"cannot reach {self.url}: {getattr(exc, 'reason', exc)}") from exc

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


@dataclass
class TensorInfo:
    name: str
    dims: list[int]
    ggml_type: int
    nbytes: int | None  # None: a type GGML_BLOCKS does not know


@dataclass
class GgufHeader:
    metadata: dict
    size: int  # the whole file's bytes
    tensors: list[TensorInfo]


def read_header(source) -> GgufHeader:
    """Metadata (long arrays such as the vocabulary left out) and tensor infos from a byte source
    (FileSource, HttpRangeSource: anything with `name`, `size` and sequential `read(n)`), opened.

    Raises ModelLoadError when it is not GGUF, or its header or tensor data is cut short.
    """
    name, size = source.name, source.size
    if source.read(4) != b"GGUF":
        raise ModelLoadError(f"{name} is not a GGUF file (no GGUF header): download or convert it again")
    try:
        raw_version = source.read(4)
        if len(raw_version) < 4:
            raise _Damaged("the file ends after its magic")
        endian = "<" if struct.unpack("<I", raw_version)[0] < 0x10000 else ">"  # big-endian files exist
        version = struct.unpack(endian + "I", raw_version)[0]
        if version < 2:
            raise ModelLoadError(f"{name} is GGUF version {version}, too old for llama.cpp: convert it again")
        cursor = _Cursor(source, endian)
        cursor.consumed = 8
        count, entries = cursor.scalar("Q"), cursor.scalar("Q")
        if count > 1 << 24 or entries > 1 << 24:
            raise _Damaged(f"{count} tensors and {entries} metadata entries")
        metadata: dict = {}
        for _ in range(entries):
            key = cursor.string()
            metadata[key] = cursor.value(cursor.scalar("I"))
        tensors, offsets = [], []
        for _ in range(count):
            tensor_name = cursor.string()
            dims = [cursor.scalar("Q") for _ in range(cursor.scalar("I"))]
            ggml_type, offset = cursor.scalar("I"), cursor.scalar("Q")
            tensors.append(TensorInfo(tensor_name, dims, ggml_type, _tensor_bytes(dims, ggml_type)))
            offsets.append(offset)
        alignment = int(metadata.get("general.alignment") or 32)
        start = -(-cursor.offset() // alignment) * alignment
        data_end = max((start + o + (t.nbytes or 0) for t, o in zip(tensors, offsets, strict=True)), default=0)
        if data_end > size:
            raise _Damaged(f"its tensors need {data_end:,} bytes but the file has {size:,}")
    except (_Damaged, struct.error, UnicodeDecodeError) as exc:
        raise ModelLoadError(f"{name} is a damaged GGUF file ({exc}): download it again") from exc
    return GgufHeader(metadata, size, tensors)


def read_metadata(path: Path) -> tuple[dict, int]:
    """All metadata key/values (long arrays such as the vocabulary left out) and the file's size.

    Raises ModelLoadError when the file is not GGUF, or its header or tensor data is cut short.
    """
    with FileSource(path) as source:
        header = read_header(source)
    return header.metadata, header.size


def _number(value, default: int = 0) -> int:
    """A count that some models store per layer as an array: the largest entry."""
    if isinstance(value, list):
        value = max(value) if value else default
    return int(value or default)


def shape_of(meta: dict, size: int, fallback_name: str) -> ModelShape:
    """The ModelShape of a GGUF's metadata (read from a file or from the Hub's ranges)."""
    arch = str(meta.get("general.architecture", ""))
    heads = _number(meta.get(f"{arch}.attention.head_count"))
    embedding = _number(meta.get(f"{arch}.embedding_length"))
    head_dim = _number(meta.get(f"{arch}.attention.key_length")) or (embedding // heads if heads else 0)
    return ModelShape(
        name=str(meta.get("general.name") or fallback_name),
        architecture=arch,
        layers=_number(meta.get(f"{arch}.block_count")),
        heads=heads,
        kv_heads=_number(meta.get(f"{arch}.attention.head_count_kv"), heads),
        head_dim=head_dim,
        context_length=_number(meta.get(f"{arch}.context_length")),
        file_bytes=size,
        chat_template=str(meta.get("tokenizer.chat_template") or ""),
    )


def read_gguf(path: Path) -> ModelShape:
    path = Path(path)
    if not path.is_file():
        raise ModelNotFound(f"model file not found: {path}")
    meta, size = read_metadata(path)
    return shape_of(meta, size, path.stem)

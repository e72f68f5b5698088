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
from engine.models.gguf_sources import FileSource, HttpRangeSource

__all__ = ["FileSource", "HttpRangeSource", "GgufHeader", "ModelShape", "TensorInfo", "read_header", "read_gguf"]

# GGUF value types: id -> struct code (fixed-size scalars); 8 is a string, 9 an array.
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
_KEEP_ARRAYS_UP_TO = 4096  # per-layer values (head counts of some models); vocabularies are skipped
_CHUNK = 1 << 20
# Bounds a real model's header stays far below (the largest have ~60 keys, ~2,000 tensors, a
# 250k-token vocabulary): beyond them a file is damaged or built to exhaust the reader.
MAX_ENTRIES = 1 << 16
MAX_TENSORS = 1 << 16
MAX_DIMS = 4  # ggml's GGML_MAX_DIMS
MAX_KEPT_ITEMS = 1 << 18  # array items kept across the header (long arrays are skipped, not kept)
MAX_KEPT_STRING = 4 << 20  # one kept string (chat templates are tens of KB)
MAX_KEPT_BYTES = 64 << 20  # all kept strings together
HEADER_CEILING = 256 << 20  # header bytes read at most (vocabularies of 250k tokens take ~10 MB)
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
    """Sequential reads over a file through a small buffer (no mmap, no whole-file read).

    Every length and count is checked against the bytes the file has left before anything is
    read or allocated; what is kept (short arrays, strings) has a budget of its own, and `key`
    names the entry being read for the error a damaged value gives."""

    def __init__(self, handle, endian: str, size: int, ceiling: int = HEADER_CEILING) -> None:
        self.handle, self.endian, self.size, self.ceiling = handle, endian, size, ceiling
        self.buffer, self.pos, self.consumed = b"", 0, 0
        self.kept_items = self.kept_bytes = 0
        self.key = ""

    def _refill(self, n: int) -> None:
        """At least n bytes from the current position in the buffer."""
        rest = self.buffer[self.pos :]
        more = self.handle.read(max(_CHUNK, n - len(rest)))
        self.consumed += self.pos
        self.buffer, self.pos = rest + more, 0
        if n > len(self.buffer):
            raise _Damaged("the file ends inside its header")

    def _room(self, n: int) -> None:
        """Raise unless n more header bytes exist in the file and within the ceiling."""
        at = self.offset()
        if self.size and at + n > self.size:
            raise _Damaged(f"{n:,} bytes asked for at offset {at:,} of a {self.size:,}-byte file")
        if at + n > self.ceiling:
            raise _Damaged(f"a header over {self.ceiling >> 20} MiB")

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.buffer):
            self._room(n)
            self._refill(n)
        data = self.buffer[self.pos : self.pos + n]
        self.pos += n
        return data

    def skip(self, n: int) -> None:
        """n bytes passed over in chunks: nothing of their size is allocated."""
        self._room(n)
        while n > 0:
            step = min(n, _CHUNK)
            self.take(step)
            n -= step

    def offset(self) -> int:
        return self.consumed + self.pos

    def scalar(self, code: str):
        return struct.unpack(self.endian + code, self.take(struct.calcsize(code)))[0]

    def count(self, code: str, item_bytes: int, what: str) -> int:
        """A count that is followed by that many items of at least `item_bytes` each."""
        n = self.scalar(code)
        self._room(n * item_bytes)
        return n

    def string(self, keep: bool = True) -> str | None:
        length = self.count("Q", 1, "a string")
        if not keep or length > MAX_KEPT_STRING or self.kept_bytes + length > MAX_KEPT_BYTES:
            self.skip(length)
            return None
        self.kept_bytes += length
        return self.take(length).decode("utf-8", "replace")

    def value(self, kind: int):
        if kind in _SCALARS:
            return self.scalar(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item = self.scalar("I")
            if item == _ARRAY:  # llama.cpp's own reader refuses them too ("invalid GGUF type")
                raise _Damaged("an array of arrays, which llama.cpp does not read")
            count = self.count("Q", _item_bytes(item), "an array")
            if count > _KEEP_ARRAYS_UP_TO or self.kept_items + count > MAX_KEPT_ITEMS:
                self.skip_array(item, count)
                return None
            self.kept_items += count
            return [self.value(item) for _ in range(count)]
        raise _Damaged(f"unknown value type {kind}")

    def skip_array(self, item: int, count: int) -> None:
        if item in _SCALARS:
            self.skip(struct.calcsize(_SCALARS[item]) * count)
        elif item == _STRING:  # vocabularies: 150k strings, walked in the buffer without slicing
            length_at = struct.Struct(self.endian + "Q").unpack_from
            for _ in range(count):
                if self.pos + 8 > len(self.buffer):
                    self._room(8)
                    self._refill(8)
                length = length_at(self.buffer, self.pos)[0]
                if self.pos + 8 + length > len(self.buffer):
                    self._room(8 + length)
                    self._refill(8 + length)
                self.pos += 8 + length
        else:
            raise _Damaged(f"unknown value type {item}")


def _item_bytes(kind: int) -> int:
    """The fewest bytes one item of this type takes in the file."""
    if kind in _SCALARS:
        return struct.calcsize(_SCALARS[kind])
    if kind == _STRING:
        return 8
    raise _Damaged(f"unknown value type {kind}")


def _tensor_bytes(dims: list[int], ggml_type: int) -> int | None:
    """Bytes of one tensor, or None for a type not in GGML_BLOCKS."""
    if ggml_type not in GGML_BLOCKS:
        return None
    block, size = GGML_BLOCKS[ggml_type]
    elements = 1
    for d in dims:
        elements *= d
    return elements // block * size


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
    cursor = None
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
        cursor = _Cursor(source, endian, size, getattr(source, "ceiling", HEADER_CEILING))
        cursor.consumed = 8
        count, entries = cursor.scalar("Q"), cursor.scalar("Q")
        if count > MAX_TENSORS or entries > MAX_ENTRIES:
            raise _Damaged(f"{count:,} tensors and {entries:,} metadata entries, more than any model has")
        metadata: dict = {}
        for index in range(entries):
            cursor.key = f"metadata entry {index}"
            key = cursor.string()
            if key is None:
                raise _Damaged(f"a key of more than {MAX_KEPT_STRING:,} bytes")
            cursor.key = key
            metadata[key] = cursor.value(cursor.scalar("I"))
        tensors, offsets = [], []
        for index in range(count):
            cursor.key = f"tensor {index}"
            tensor_name = cursor.string() or ""
            cursor.key = f"tensor {tensor_name or index}"
            n_dims = cursor.scalar("I")
            if n_dims > MAX_DIMS:
                raise _Damaged(f"{n_dims} dimensions (ggml has at most {MAX_DIMS})")
            dims = [cursor.scalar("Q") for _ in range(n_dims)]
            ggml_type, offset = cursor.scalar("I"), cursor.scalar("Q")
            nbytes = _tensor_bytes(dims, ggml_type)
            if nbytes is not None and nbytes > size:
                raise _Damaged(f"dimensions {dims} need {nbytes:,} bytes, the file has {size:,}")
            tensors.append(TensorInfo(tensor_name, dims, ggml_type, nbytes))
            offsets.append(offset)
        cursor.key = "general.alignment"
        alignment = _alignment(metadata.get("general.alignment", 32))
        start = -(-cursor.offset() // alignment) * alignment
        cursor.key = "tensor data"
        data_end = max((start + o + (t.nbytes or 0) for t, o in zip(tensors, offsets, strict=True)), default=0)
        if data_end > size:
            raise _Damaged(f"its tensors need {data_end:,} bytes but the file has {size:,}")
    except (_Damaged, struct.error, UnicodeDecodeError) as exc:
        where = f"{cursor.key}: " if cursor is not None and cursor.key else ""
        raise ModelLoadError(f"{name} is a damaged GGUF file ({where}{exc}): download it again") from exc
    return GgufHeader(metadata, size, tensors)


def _alignment(value) -> int:
    """general.alignment: a power of two (llama.cpp writes 32), else the file is damaged."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1 << 16 or value & (value - 1):
        raise _Damaged(f"{value!r} is not a power of two up to 65536")
    return value


def read_metadata(path: Path) -> tuple[dict, int]:
    """All metadata key/values (long arrays such as the vocabulary left out) and the file's size.

    Raises ModelLoadError when the file is not GGUF, or its header or tensor data is cut short.
    """
    with FileSource(path) as source:
        header = read_header(source)
    return header.metadata, header.size


MAX_COUNT = 1 << 40  # layers, heads, widths, context lengths: far below this in any model


def metadata_count(meta: dict, key: str, name: str, default: int = 0) -> int:
    """A count from the metadata (some models store one per layer, as an array: its largest
    entry). Anything but a whole number from 0 to MAX_COUNT makes the file damaged, named by key."""
    value = meta.get(key)
    if value is None:
        return default
    values = value if isinstance(value, list) else [value]
    counts = []
    for v in values:
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_COUNT:
            raise ModelLoadError(f"{name} is a damaged GGUF file ({key} is {v!r}, not a count): download it again")
        counts.append(v)
    return max(counts) if counts else default


def shape_of(meta: dict, size: int, fallback_name: str) -> ModelShape:
    """The ModelShape of a GGUF's metadata (read from a file or from the Hub's ranges)."""
    arch = str(meta.get("general.architecture") or "")
    name = str(meta.get("general.name") or fallback_name)
    heads = metadata_count(meta, f"{arch}.attention.head_count", name)
    embedding = metadata_count(meta, f"{arch}.embedding_length", name)
    head_dim = metadata_count(meta, f"{arch}.attention.key_length", name) or (embedding // heads if heads else 0)
    return ModelShape(
        name=name,
        architecture=arch,
        layers=metadata_count(meta, f"{arch}.block_count", name),
        heads=heads,
        kv_heads=metadata_count(meta, f"{arch}.attention.head_count_kv", name, heads),
        head_dim=head_dim,
        context_length=metadata_count(meta, f"{arch}.context_length", name),
        file_bytes=size,
        chat_template=str(meta.get("tokenizer.chat_template") or ""),
    )


def refuse_non_models(header: GgufHeader, shape: ModelShape, name: str) -> None:
    """A GGUF that holds no weights (a vocabulary-only file) or no layers, heads or width to
    run is not a model: refused before it is chosen, in DocDesk's words."""
    if not header.tensors:
        raise ModelLoadError(f"{name} holds no tensors (no weights): it is not a model, perhaps a vocabulary-only GGUF")
    missing = [what for what, n in (("layers", shape.layers), ("attention heads", shape.heads)) if n < 1]
    if missing:
        raise ModelLoadError(
            f"{name} does not say how many {' or '.join(missing)} it has "
            f"(architecture {shape.architecture or 'not named'}): it is not a model DocDesk can run"
        )


def read_gguf(path: Path) -> ModelShape:
    path = Path(path)
    if not path.is_file():
        raise ModelNotFound(f"model file not found: {path}")
    with FileSource(path) as source:
        header = read_header(source)
    shape = shape_of(header.metadata, header.size, path.stem)
    refuse_non_models(header, shape, path.name)
    return shape

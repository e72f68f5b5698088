"""GGUF metadata (architecture, layers, heads, context, chat template) without loading weights."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import ModelLoadError, ModelNotFound


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


def _value(reader, key: str, default=None):
    field = reader.fields.get(key)
    if field is None:
        return default
    contents = getattr(field, "contents", None)
    if contents is not None:
        return contents()
    part = field.parts[field.data[0]]
    return bytes(part).decode("utf-8") if part.dtype.kind == "u" and part.dtype.itemsize == 1 else part[0]


def read_gguf(path: Path) -> ModelShape:
    path = Path(path)
    if not path.is_file():
        raise ModelNotFound(f"model file not found: {path}")
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ModelLoadError(f"{path.name} is not a GGUF file (no GGUF header): download or convert it again")
    try:
        from gguf import GGUFReader

        reader = GGUFReader(str(path))
    except Exception as exc:  # truncated or damaged files fail in many ways inside the reader
        raise ModelLoadError(
            f"{path.name} is a damaged GGUF file ({type(exc).__name__}: {exc}): download it again"
        ) from exc
    arch = str(_value(reader, "general.architecture", ""))
    heads = int(_value(reader, f"{arch}.attention.head_count", 0) or 0)
    embedding = int(_value(reader, f"{arch}.embedding_length", 0) or 0)
    head_dim = int(_value(reader, f"{arch}.attention.key_length", 0) or (embedding // heads if heads else 0))
    return ModelShape(
        name=str(_value(reader, "general.name", path.stem)),
        architecture=arch,
        layers=int(_value(reader, f"{arch}.block_count", 0) or 0),
        heads=heads,
        kv_heads=int(_value(reader, f"{arch}.attention.head_count_kv", heads) or heads),
        head_dim=head_dim,
        context_length=int(_value(reader, f"{arch}.context_length", 0) or 0),
        file_bytes=path.stat().st_size,
        chat_template=str(_value(reader, "tokenizer.chat_template", "") or ""),
    )

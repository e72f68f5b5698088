"""Hostile GGUF headers (issue 39, item 2): every count, length, depth and size is checked against
the file before anything is allocated; a malformed value is a `damaged GGUF` error naming its key;
what is kept has a budget; a file with no tensors or no layers is not a model; a header read from
the Hub has a ceiling and deadlines, and Ctrl-C ends `docdesk models` at once. Each file is built
byte by byte as the attack built it (fast forms here; the full sizes are marked slow)."""

from __future__ import annotations

import math
import os
import signal
import struct
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from engine.errors import ModelLoadError, ModelNotFound
from engine.models.gguf_info import HttpRangeSource, read_gguf, read_header
from engine.models.gguf_sources import FileSource

ROOT = Path(__file__).resolve().parents[2]
U32, I32, F32, BOOL, STR, ARR, U64, F64 = 4, 5, 6, 7, 8, 9, 10, 12


def s(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def kv(key: str, kind: int, payload: bytes) -> bytes:
    return s(key) + struct.pack("<I", kind) + payload


def gguf(entries: list[bytes], tensors: list[bytes] = (), data: bytes = b"", count: int | None = None) -> bytes:
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors) if count is None else count, len(entries))
    body = head + b"".join(entries) + b"".join(tensors)
    return body + b"\0" * (-len(body) % 32) + data


def tensor(name: str, dims: list[int], ggml_type: int = 0, offset: int = 0) -> bytes:
    return (
        s(name)
        + struct.pack("<I", len(dims))
        + b"".join(struct.pack("<Q", d) for d in dims)
        + struct.pack("<IQ", ggml_type, offset)
    )


def model(extra: list[bytes] = (), arch: str = "llama", **fields) -> bytes:
    """A header that is a model (one f32 tensor, layers and heads), with `extra` entries after."""
    counts = {"block_count": 2, "attention.head_count": 4, "embedding_length": 8, "context_length": 128} | fields
    entries = [kv("general.architecture", STR, s(arch))]
    for key, value in counts.items():
        if isinstance(value, bytes):
            entries.append(kv(f"{arch}.{key}", value[0], value[1:]))
        else:
            entries.append(kv(f"{arch}.{key}", U32, struct.pack("<I", value)))
    return gguf(entries + list(extra), [tensor("output.weight", [8])], b"\0" * 32)


def write(tmp_path: Path, name: str, raw: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(raw)
    return path


def refused(path: Path, *words: str) -> str:
    started = time.perf_counter()
    with pytest.raises(ModelLoadError) as caught:
        read_gguf(path)
    assert time.perf_counter() - started < 1.0
    message = str(caught.value)
    for word in words:
        assert word in message, message
    return message


def nested(depth: int) -> bytes:
    """An array of an array of ... `depth` deep, each holding one array."""
    inner = struct.pack("<IQ", U32, 0)
    for _ in range(depth):
        inner = struct.pack("<IQ", ARR, 1) + inner
    return inner


def test_malformed_values_are_a_damaged_gguf_naming_their_key(tmp_path):
    cases = {
        "nested-3000": (model([kv("deep", ARR, nested(3000))]), ["damaged GGUF", "deep", "array of arrays"]),
        "array-2^61": (model([kv("huge", ARR, struct.pack("<IQ", U32, 1 << 61))]), ["damaged GGUF", "huge"]),
        "alignment-0.5": (model([kv("general.alignment", F32, struct.pack("<f", 0.5))]), ["general.alignment"]),
        "alignment-str": (model([kv("general.alignment", STR, s("32"))]), ["general.alignment"]),
        "blocks-str": (model(block_count=bytes([STR]) + s("sixty")), ["llama.block_count", "not a count"]),
        "heads-nan": (model(**{"attention.head_count": bytes([F32]) + struct.pack("<f", math.nan)}), ["head_count"]),
        "context-inf": (model(context_length=bytes([F64]) + struct.pack("<d", math.inf)), ["context_length"]),
        "string-2^40": (model([kv("long", STR, struct.pack("<Q", 1 << 40))]), ["damaged GGUF", "long"]),
        "dims-9": (gguf([kv("general.architecture", STR, s("llama"))], [tensor("t", [1] * 9)]), ["9 dimensions"]),
        "tensors-4M": (gguf([], count=4_000_000), ["4,000,000 tensors"]),
        "tensor-bigger-than-file": (
            model([]).replace(struct.pack("<Q", 8), struct.pack("<Q", 1 << 40), 1),
            ["damaged"],
        ),
    }
    for name, (raw, words) in cases.items():
        refused(write(tmp_path, f"{name}.gguf", raw), *words)


def test_a_gguf_without_tensors_or_layers_is_not_a_model(tmp_path):
    no_tensors = gguf([kv("general.architecture", STR, s("llama")), kv("llama.block_count", U32, struct.pack("<I", 2))])
    refused(write(tmp_path, "vocab-only.gguf", no_tensors), "no tensors", "not a model")
    no_layers = gguf([kv("general.architecture", STR, s("llama"))], [tensor("output.weight", [8])], b"\0" * 32)
    refused(write(tmp_path, "no-layers.gguf", no_layers), "layers")
    assert read_gguf(write(tmp_path, "fine.gguf", model())).layers == 2


@pytest.mark.parametrize("megabytes", [20, pytest.param(200, marks=pytest.mark.slow)])
def test_kept_values_have_a_budget_so_memory_follows_what_is_kept(tmp_path, megabytes):
    """`megabytes` of short arrays (4,096 numbers each, the longest kept): kept up to
    MAX_KEPT_ITEMS in all, skipped after, so memory stays that of the budget."""
    one = struct.pack("<IQ", U32, 4096) + struct.pack("<I", 7) * 4096
    entries = [kv(f"k{i}", ARR, one) for i in range(megabytes * (1 << 20) // len(one))]
    path = write(tmp_path, "kept.gguf", model(entries))
    tracemalloc.start()
    started = time.perf_counter()
    with FileSource(path) as source:
        header = read_header(source)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    kept = sum(1 for v in header.metadata.values() if isinstance(v, list))
    assert kept == 64 and len(header.metadata) == len(entries) + 5  # 64 x 4,096 = MAX_KEPT_ITEMS
    assert peak < 64 << 20, peak
    assert seconds < 10, seconds


def test_a_hub_header_has_a_ceiling_and_a_trickle_a_deadline(tmp_path):
    from tests.hub_server import FakeHub

    hub = FakeHub()
    declared = model([kv("tokenizer.ggml.tokens", ARR, struct.pack("<IQ", U32, 1_400_000_000))])
    hub.add("x/y", "declares.gguf", write(tmp_path, "declares.gguf", declared + b"\0" * (8 << 20)))
    hub.add("x/y", "real.gguf", write(tmp_path, "real.gguf", model()))
    hub.start()
    try:
        base = f"{hub.endpoint}/x/y/resolve/main/"
        with HttpRangeSource(base + "declares.gguf") as source, pytest.raises(ModelLoadError, match="damaged"):
            read_header(source)
        assert max(r.sent for r in hub.log if r.path.endswith("declares.gguf") and r.method == "GET") <= 4 << 20
        hub.chunk_bytes, hub.bytes_per_second = 1, 2.0  # a byte every half second: no read times out
        started = time.perf_counter()
        with pytest.raises(ModelNotFound, match="too slowly"):
            with HttpRangeSource(base + "real.gguf", total=2.0, timeout=5.0) as source:
                read_header(source)
        assert time.perf_counter() - started < 4.0
    finally:
        hub.stop()


def test_ctrl_c_ends_docdesk_models_at_once_while_the_hub_trickles(tmp_path):
    from engine.backends.llama_cpp import bundled_model_path
    from engine.models.catalog import load_catalog
    from tests.hub_server import FakeHub

    hub = FakeHub(bytes_per_second=1.0, chunk_bytes=1)
    for entry in load_catalog():
        hub.add(entry.repo, entry.file, bundled_model_path())
    hub.start()
    env = {
        **os.environ,
        "HF_ENDPOINT": hub.endpoint,
        "DOCDESK_MODELS": str(tmp_path / "models"),
        "DOCDESK_HOME": str(tmp_path / "library"),
        "DOCDESK_CONFIG": str(tmp_path / "config.toml"),
    }
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "app.cli.main", "models"], env=env, cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        time.sleep(4)  # importing, then reading headers a byte a second
        assert child.poll() is None
        child.send_signal(signal.SIGINT)
        started = time.perf_counter()
        _, err = child.communicate(timeout=10)
        assert time.perf_counter() - started < 2.0 and child.returncode == 130, err
        assert "Traceback" not in err
    finally:
        hub.stop()

"""A GGUF with a real model's shape and random weights: for load and throughput tests only.

    python tests/bench/synthetic_gguf.py OUT.gguf --shape qwen2-32b --vocab-from ggml-vocab-qwen2.gguf

Decode speed of a dense model does not depend on the weight values, so a file with the tensor
shapes and quantization types of a Q4_K_M model measures it honestly. The text such a model
writes is noise: say so wherever its numbers appear. Nothing is downloaded: the tokenizer comes
from a vocab-only GGUF (llama.cpp ships them in `models/`) or from any GGUF model (the bundled
SmolLM2 for the CPU tests).

Quantized blocks are random bytes with their fp16 scale fields set to small finite values (no
NaN or Inf reach the kernels). Q6_K goes where llama.cpp's Q4_K_M recipe puts it: the output
matrix, and attn_v / ffn_down of the first and last eighth of the layers and every third layer
between. End-of-generation tokens get a -1000 output bias where the architecture has one, so
a benchmark always reaches its length.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
EOG_TEXTS = {"<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|end_of_text|>", "<|end|>", "</s>", "<end_of_turn>"}


@dataclass(frozen=True)
class Shape:
    arch: str
    embd: int
    layers: int
    heads: int
    kv_heads: int
    ff: int
    context: int
    rope_base: float = 1_000_000.0
    qkv_bias: bool = False
    output_bias: bool = False


SHAPES = {
    # Qwen2.5-32B: the size of model DocDesk's users run in 4 bits on one GPU.
    "qwen2-32b": Shape("qwen2", 5120, 64, 40, 8, 27648, 32768, qkv_bias=True, output_bias=True),
    # A few MB of layers behind a real vocabulary: for the cost of sampling per token.
    "qwen2-tiny": Shape("qwen2", 256, 2, 4, 2, 512, 4096, qkv_bias=True, output_bias=True),
    # The same few MB with Llama's architecture name (which, unlike qwen2, names no chat format).
    "llama-tiny": Shape("llama", 256, 2, 4, 2, 512, 4096, rope_base=10_000.0),
    # About 0.7 GB: large enough that a load maps real gigabytes, small enough for CI's CPU.
    "llama-1b": Shape("llama", 2048, 16, 16, 4, 8192, 8192, rope_base=10_000.0),
}


def _q4_k(rows: int, cols: int, rng) -> np.ndarray:
    """Q4_K blocks (256 values in 144 bytes: fp16 d, fp16 dmin, 12 scale bytes, 128 nibble bytes)."""
    blocks = rng.integers(0, 256, size=(rows * cols // 256, 144), dtype=np.uint8)
    blocks[:, 0:4] = np.frombuffer(np.array([2.0**-12, 2.0**-12], dtype=np.float16).tobytes(), dtype=np.uint8)
    return blocks.reshape(rows, cols // 256 * 144)


def _q6_k(rows: int, cols: int, rng) -> np.ndarray:
    """Q6_K blocks (256 values in 210 bytes: 128 low, 64 high bit bytes, 16 int8 scales, fp16 d)."""
    blocks = rng.integers(0, 256, size=(rows * cols // 256, 210), dtype=np.uint8)
    blocks[:, 208:210] = np.frombuffer(np.array([2.0**-14], dtype=np.float16).tobytes(), dtype=np.uint8)
    return blocks.reshape(rows, cols // 256 * 210)


def _more_bits(layer: int, layers: int) -> bool:
    """llama.cpp's use_more_bits(): the layers whose attn_v and ffn_down Q4_K_M keeps in Q6_K."""
    return layer < layers // 8 or layer >= 7 * layers // 8 or (layer - layers // 8) % 3 == 2


def _tokenizer(source: Path) -> tuple[list[tuple[str, object, object]], list[str]]:
    """The tokenizer.* metadata of a GGUF, as (key, value, value type) triples, and its tokens."""
    from gguf import GGUFReader, GGUFValueType

    reader = GGUFReader(str(source))
    fields = []
    tokens: list[str] = []
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer.") or key == "tokenizer.chat_template":
            continue
        value = field.contents()
        vtype = field.types[0]
        sub = field.types[1] if vtype == GGUFValueType.ARRAY and len(field.types) > 1 else None
        fields.append((key, value, (vtype, sub)))
        if key == "tokenizer.ggml.tokens":
            tokens = list(value)
    if not tokens:
        raise SystemExit(f"{source} has no tokenizer.ggml.tokens")
    return fields, tokens


def write(out: Path, shape: Shape, vocab_from: Path, seed: int = 0, chat_template: str = CHATML) -> Path:
    from gguf import GGMLQuantizationType as Q
    from gguf import GGUFWriter

    rng = np.random.default_rng(seed)
    fields, tokens = _tokenizer(vocab_from)
    vocab = len(tokens)
    head_dim = shape.embd // shape.heads
    kv = shape.kv_heads * head_dim
    a = shape.arch

    writer = GGUFWriter(str(out), a)
    writer.add_name(f"synthetic {a} {shape.layers}x{shape.embd} (random weights)")
    writer.add_file_type(15)  # MOSTLY_Q4_K_M
    writer.add_context_length(shape.context)
    writer.add_embedding_length(shape.embd)
    writer.add_block_count(shape.layers)
    writer.add_feed_forward_length(shape.ff)
    writer.add_head_count(shape.heads)
    writer.add_head_count_kv(shape.kv_heads)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_freq_base(shape.rope_base)
    writer.add_rope_dimension_count(head_dim)
    for key, value, (vtype, sub) in fields:
        writer.add_key_value(key, value, vtype, sub_type=sub)
    writer.add_chat_template(chat_template)

    # (name, numpy byte shape or float shape, ggml type, maker)
    plan: list[tuple[str, tuple[int, int] | tuple[int], Q]] = [("token_embd.weight", (vocab, shape.embd), Q.Q4_K)]
    for i in range(shape.layers):
        wide = Q.Q6_K if _more_bits(i, shape.layers) else Q.Q4_K
        plan += [
            (f"blk.{i}.attn_norm.weight", (shape.embd,), Q.F32),
            (f"blk.{i}.attn_q.weight", (shape.embd, shape.embd), Q.Q4_K),
            (f"blk.{i}.attn_k.weight", (kv, shape.embd), Q.Q4_K),
            (f"blk.{i}.attn_v.weight", (kv, shape.embd), wide),
            (f"blk.{i}.attn_output.weight", (shape.embd, shape.embd), Q.Q4_K),
            (f"blk.{i}.ffn_norm.weight", (shape.embd,), Q.F32),
            (f"blk.{i}.ffn_gate.weight", (shape.ff, shape.embd), Q.Q4_K),
            (f"blk.{i}.ffn_up.weight", (shape.ff, shape.embd), Q.Q4_K),
            (f"blk.{i}.ffn_down.weight", (shape.embd, shape.ff), wide),
        ]
        if shape.qkv_bias:
            plan += [
                (f"blk.{i}.attn_q.bias", (shape.embd,), Q.F32),
                (f"blk.{i}.attn_k.bias", (kv,), Q.F32),
                (f"blk.{i}.attn_v.bias", (kv,), Q.F32),
            ]
    plan += [("output_norm.weight", (shape.embd,), Q.F32), ("output.weight", (vocab, shape.embd), Q.Q6_K)]
    if shape.output_bias:
        plan.append(("output.bias", (vocab,), Q.F32))

    def bytes_per_row(cols: int, kind: Q) -> int:
        return cols // 256 * (144 if kind == Q.Q4_K else 210)

    for name, dims, kind in plan:
        if kind == Q.F32:
            writer.add_tensor_info(name, dims, np.dtype(np.float32), 4 * dims[0])
        else:
            rows, cols = dims
            per_row = bytes_per_row(cols, kind)
            writer.add_tensor_info(name, (rows, per_row), np.dtype(np.uint8), rows * per_row, raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    end_ids = [i for i, text in enumerate(tokens) if text in EOG_TEXTS]
    for name, dims, kind in plan:
        if kind == Q.F32:
            if name == "output.bias":
                data = np.zeros(dims, dtype=np.float32)
                data[end_ids] = -1000.0
            elif name.endswith("norm.weight"):
                data = np.ones(dims, dtype=np.float32)
            else:
                data = np.zeros(dims, dtype=np.float32)
        else:
            data = (_q4_k if kind == Q.Q4_K else _q6_k)(dims[0], dims[1], rng)
        writer.write_tensor_data(data)
    writer.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="qwen2-32b")
    parser.add_argument("--vocab-from", type=Path, required=True, help="a GGUF whose tokenizer to copy")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    path = write(args.out, SHAPES[args.shape], args.vocab_from, args.seed)
    print(f"{path}: {path.stat().st_size / 1e9:.2f} GB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

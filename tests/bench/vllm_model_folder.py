"""A model folder vLLM can start without weights (`--load-format dummy`: random weights, speed
only): Qwen2.5-32B-Instruct's shape (as published in its config.json) with a GPTQ or AWQ
`quantization_config` (as Qwen's own GPTQ-Int4 and AWQ releases carry), and a real Qwen2
tokenizer made from llama.cpp's vocabulary-only GGUF (`models/ggml-vocab-qwen2.gguf` in the
locked llama-cpp-python sdist) through transformers' GGUF support.

    python tests/bench/vllm_model_folder.py OUT --vocab ggml-vocab-qwen2.gguf --quantization gptq awq

writes OUT/qwen2.5-32b-gptq/ and OUT/qwen2.5-32b-awq/ (config.json, generation_config.json and the
tokenizer's files; the tokenizer is written once and copied).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

# Qwen/Qwen2.5-32B-Instruct's config.json
QWEN25_32B = {
    "architectures": ["Qwen2ForCausalLM"],
    "attention_dropout": 0.0,
    "bos_token_id": 151643,
    "eos_token_id": 151645,
    "hidden_act": "silu",
    "hidden_size": 5120,
    "initializer_range": 0.02,
    "intermediate_size": 27648,
    "max_position_embeddings": 32768,
    "max_window_layers": 64,
    "model_type": "qwen2",
    "num_attention_heads": 40,
    "num_hidden_layers": 64,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0,
    "sliding_window": 131072,
    "tie_word_embeddings": False,
    "torch_dtype": "float16",
    "use_cache": True,
    "use_sliding_window": False,
    "vocab_size": 152064,
}
# as in Qwen/Qwen2.5-32B-Instruct-GPTQ-Int4 and Qwen/Qwen2.5-32B-Instruct-AWQ
QUANTIZATION = {
    "gptq": {
        "bits": 4,
        "damp_percent": 0.01,
        "desc_act": False,
        "group_size": 128,
        "is_marlin_format": False,
        "model_file_base_name": "model",
        "quant_method": "gptq",
        "static_groups": False,
        "sym": True,
        "true_sequential": True,
        # vLLM 0.26 finds the quantized layers here or, without it, in the checkpoint's safetensors
        # metadata; a folder without weights has none, and every layer then loads unquantized
        # (61 GiB for this shape on an H100: tests/bench/results/gpu-h100-vllm-gptq-as-fp16.json)
        "modules_in_block_to_quantize": [
            ["self_attn.k_proj", "self_attn.v_proj", "self_attn.q_proj"],
            ["self_attn.o_proj"],
            ["mlp.up_proj", "mlp.gate_proj"],
            ["mlp.down_proj"],
        ],
    },
    "awq": {
        "bits": 4,
        "group_size": 128,
        "modules_to_not_convert": None,
        "quant_method": "awq",
        "version": "gemm",
        "zero_point": True,
    },  # fmt: skip
}
GENERATION = {"bos_token_id": 151643, "eos_token_id": [151645, 151643], "pad_token_id": 151643, "do_sample": False}
CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def write_tokenizer(vocab: Path, folder: Path) -> int:
    """The Qwen2 tokenizer from llama.cpp's vocabulary GGUF; its size."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(vocab.parent), gguf_file=vocab.name)
    tokenizer.eos_token = "<|im_end|>"
    tokenizer.pad_token = "<|endoftext|>"
    tokenizer.chat_template = CHATML
    tokenizer.save_pretrained(str(folder))
    return len(tokenizer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--vocab", type=Path, required=True)
    parser.add_argument("--quantization", nargs="+", choices=sorted(QUANTIZATION), default=["gptq", "awq"])
    args = parser.parse_args(argv)
    tokenizer = args.out / "tokenizer"
    size = write_tokenizer(args.vocab, tokenizer)
    for name in args.quantization:
        folder = args.out / f"qwen2.5-32b-{name}"
        folder.mkdir(parents=True, exist_ok=True)
        config = {**QWEN25_32B, "quantization_config": QUANTIZATION[name]}
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        (folder / "generation_config.json").write_text(json.dumps(GENERATION, indent=2) + "\n", encoding="utf-8")
        for file in tokenizer.iterdir():
            shutil.copy2(file, folder / file.name)
    shutil.rmtree(tokenizer)
    print(f"{', '.join(args.quantization)} folders in {args.out}; tokenizer of {size} entries")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

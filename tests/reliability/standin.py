"""A stand-in embedding model for the attacks about size (a 200 MB text, a 50 MB line): the
bundled all-MiniLM-L6-v2's tokenizer and passage length with a one-layer, 32-wide BERT of seeded
random weights. DocDesk loads it as any local sentence-transformers folder (`--embedding-model`),
chunks exactly as with the real model (same tokenizer, same 256 word pieces), and embeds some
hundred times faster, so these attacks time the reading, chunking and storing that they are
about, not the CPU's speed at a real model (about 6 passages a second on two busy cores)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

WIDTH, INNER, LAYERS, HEADS = 32, 64, 1, 2
_COPIED = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "modules.json")


def build_standin_model(folder: Path) -> Path:
    import numpy as np
    from safetensors.numpy import save_file

    from ingest.embedders.sentence_transformer import bundled_model_path

    source = bundled_model_path()
    folder.mkdir(parents=True, exist_ok=True)
    for name in _COPIED:
        shutil.copy(source / name, folder / name)
    shutil.copy(source / "sentence_bert_config.json", folder / "sentence_bert_config.json")
    config = json.loads((source / "config.json").read_text())
    config.update(hidden_size=WIDTH, intermediate_size=INNER, num_hidden_layers=LAYERS, num_attention_heads=HEADS)
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    pooling = json.loads((source / "1_Pooling" / "config.json").read_text())
    pooling["word_embedding_dimension"] = WIDTH
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (folder / "2_Normalize").mkdir(exist_ok=True)

    rng = np.random.default_rng(13)
    tensors = {}
    for name, shape in _shapes(config["vocab_size"], config["max_position_embeddings"]).items():
        if name.endswith("LayerNorm.weight"):
            tensors[name] = np.ones(shape, dtype=np.float32)
        elif name.endswith("bias") or name.endswith("LayerNorm.bias"):
            tensors[name] = np.zeros(shape, dtype=np.float32)
        else:
            tensors[name] = rng.normal(0, 0.02, shape).astype(np.float32)
    save_file(tensors, str(folder / "model.safetensors"))
    return folder


def _shapes(vocab: int, positions: int) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (vocab, WIDTH),
        "embeddings.position_embeddings.weight": (positions, WIDTH),
        "embeddings.token_type_embeddings.weight": (2, WIDTH),
        "embeddings.LayerNorm.weight": (WIDTH,),
        "embeddings.LayerNorm.bias": (WIDTH,),
        "pooler.dense.weight": (WIDTH, WIDTH),
        "pooler.dense.bias": (WIDTH,),
    }
    for layer in range(LAYERS):
        at = f"encoder.layer.{layer}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            shapes[at + part + ".weight"] = (WIDTH, WIDTH)
            shapes[at + part + ".bias"] = (WIDTH,)
        shapes[at + "intermediate.dense.weight"] = (INNER, WIDTH)
        shapes[at + "intermediate.dense.bias"] = (INNER,)
        shapes[at + "output.dense.weight"] = (WIDTH, INNER)
        shapes[at + "output.dense.bias"] = (WIDTH,)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[at + norm + ".weight"] = (WIDTH,)
            shapes[at + norm + ".bias"] = (WIDTH,)
    return shapes

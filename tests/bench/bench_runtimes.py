"""Other runtimes for the bundled MiniLM, against what DocDesk runs (not part of `make bench`:
OpenVINO and onnx are not DocDesk dependencies).

    PYTHONPATH=DIR python tests/bench/bench_runtimes.py   # DIR: pip install --target DIR openvino onnx

Issue 16 named sentence-transformers' ONNX and OpenVINO backends. They come through optimum
(optimum-onnx, optimum-intel), whose current releases require transformers < 4.58 and < 5.6
while DocDesk's lock has 5.24, so the same graphs are built here without optimum: the model's
transformer exported once (OpenVINO's converter; torch.onnx for ONNX Runtime), mean pooling and
normalization in numpy, the passages sorted by length and batched by 8 as sentence-transformers
does, two threads. Each runtime is timed over the passages of `tests/data/corpus/pdf-samples` after
a warm-up; `cosine_min` is the worst passage's cosine to its fp32 PyTorch vector.

Prints one JSON line. A runtime whose package is missing is reported as such, not skipped silently.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
BATCH = 8
THREADS = 2


class Passages:
    """The corpus passages, sorted longest first and cut into tokenized batches."""

    def __init__(self, texts: list[str], tokenizer) -> None:
        self.texts = texts
        self.order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        ordered = [texts[i] for i in self.order]
        self.batches = [
            tokenizer(ordered[i : i + BATCH], padding=True, truncation=True, max_length=256, return_tensors="np")
            for i in range(0, len(ordered), BATCH)
        ]

    def embed(self, run: Callable[[dict], object]):
        """(seconds, vectors in the passages' own order) for a runtime's `run(batch) -> hidden states`."""
        import numpy as np

        for batch in self.batches[:2]:
            run(batch)  # warm-up: first calls compile and allocate
        started = time.perf_counter()
        pooled = [_mean_pooled(np.asarray(run(batch)), batch["attention_mask"]) for batch in self.batches]
        seconds = time.perf_counter() - started
        vectors = np.empty((len(self.texts), pooled[0].shape[1]), dtype=np.float32)
        vectors[self.order] = np.concatenate(pooled)
        return seconds, vectors


def _mean_pooled(hidden, mask):
    import numpy as np

    weights = mask[..., None].astype(np.float32)
    vectors = (hidden.astype(np.float32) * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _transformer(model):
    """The sentence-transformers model's transformer as a module of three tensors -> hidden states."""
    import torch

    class Transformer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model[0].auto_model.eval()

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    return Transformer()


def _example(passages: Passages):
    import torch

    first = passages.batches[0]
    return tuple(torch.from_numpy(first[name]) for name in ("input_ids", "attention_mask", "token_type_ids"))


def openvino_runs(passages: Passages, model) -> dict[str, Callable]:
    import openvino
    import torch

    core = openvino.Core()
    core.set_property("CPU", {"INFERENCE_NUM_THREADS": THREADS})
    with torch.no_grad():
        graph = openvino.convert_model(_transformer(model), example_input=_example(passages))
    runs = {}
    for hint in ("f32", "bf16"):
        request = core.compile_model(graph, "CPU", {"INFERENCE_PRECISION_HINT": hint}).create_infer_request()

        def run(batch, request=request):
            outputs = request.infer([batch["input_ids"], batch["attention_mask"], batch["token_type_ids"]])
            return next(iter(outputs.values()))

        runs[f"openvino_{hint}"] = run
    return runs


def onnxruntime_runs(passages: Passages, model, folder: Path) -> dict[str, Callable]:
    import onnxruntime
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {name: {0: "batch", 1: "tokens"} for name in [*names, "hidden"]}
    fp32, int8 = folder / "model.onnx", folder / "model-int8.onnx"
    with torch.no_grad():
        torch.onnx.export(
            _transformer(model), _example(passages), str(fp32), input_names=names, output_names=["hidden"],
            dynamic_axes=axes, opset_version=17, dynamo=False,
        )  # fmt: skip
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    runs = {}
    for name, path in (("onnxruntime_fp32", fp32), ("onnxruntime_int8", int8)):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = THREADS
        session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

        def run(batch, session=session):
            return session.run(None, {name: batch[name] for name in names})[0]

        runs[name] = run
    return runs


def main() -> int:
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder, bundled_model_path
    from tests.bench.bench_embedders import corpus_passages

    torch.set_num_threads(THREADS)
    texts = corpus_passages()
    reference = SentenceTransformer(str(bundled_model_path()), device="cpu")
    passages = Passages(texts, reference.tokenizer)
    reference.encode(texts[:16], batch_size=BATCH)  # warm-up
    started = time.perf_counter()
    fp32 = np.asarray(reference.encode(texts, batch_size=BATCH, normalize_embeddings=True), dtype=np.float32)
    result: dict[str, object] = {"passages": len(texts), "threads": THREADS}
    result["torch_fp32_s"] = round(time.perf_counter() - started, 2)
    docdesk = SentenceTransformerEmbedder()
    docdesk.encode(texts[:16])  # warm-up
    started = time.perf_counter()
    ours = docdesk.encode(texts)
    result[f"docdesk_{docdesk.precision}_s"] = round(time.perf_counter() - started, 2)
    result[f"docdesk_{docdesk.precision}_cosine_min"] = round(float((ours * fp32).sum(axis=1).min()), 5)
    with tempfile.TemporaryDirectory() as folder:
        for name, make in (
            ("openvino", lambda: openvino_runs(passages, reference)),
            ("onnxruntime", lambda: onnxruntime_runs(passages, reference, Path(folder))),
        ):
            try:
                runs = make()
            except ImportError as exc:
                result[f"{name}_missing"] = str(exc)
                continue
            for label, run in runs.items():
                seconds, vectors = passages.embed(run)
                result[f"{label}_s"] = round(seconds, 2)
                result[f"{label}_cosine_min"] = round(float((vectors * fp32).sum(axis=1).min()), 5)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

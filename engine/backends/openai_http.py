"""Any OpenAI-compatible server (vLLM, SGLang, llama.cpp's server, a remote GPU box) over HTTP."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from engine.backends.base import ChatRequest, ReasoningPiece
from engine.backends.capabilities import Capabilities, Reasoning, SlowStreaks
from engine.backends.logprobs import yes_share
from engine.backends.registry import register_backend
from engine.errors import BackendUnavailable, Cancelled, ContextTooLong, ModelNotFound, ServerError

if TYPE_CHECKING:
    from engine.backends import LlmSettings

log = logging.getLogger(__name__)

CONNECT_RETRIES = 3


def _estimate_tokens(text: str) -> int:
    from ingest.tokens import block_encoding

    return len(block_encoding().encode_ordinary(text))


@register_backend("openai")
class OpenAIBackend:
    """Streams /v1/chat/completions; up to `max_concurrency` requests in flight at once."""

    name = "openai"
    # Whether the server continues a final assistant message (llama-server does; the OpenAI API
    # does not promise it): generate.py then answers a reply cut mid-thought from its thinking.
    continues_final_message = False

    @classmethod
    def from_settings(
        cls, settings: LlmSettings, *, log_dir: Path | None = None, has_bf16: bool | None = None
    ) -> OpenAIBackend:
        backend = cls(
            settings.url,
            settings.model,
            settings.api_key,
            settings.max_concurrency,
            settings.connect_timeout,
            settings.read_timeout,
            settings.context,
        )
        backend.thinking, backend.thinking_budget = settings.thinking, settings.thinking_budget
        return backend

    def __init__(
        self,
        url: str = "http://127.0.0.1:8000",
        model: str | None = None,
        api_key: str | None = None,
        max_concurrency: int = 4,
        connect_timeout: float = 5.0,
        read_timeout: float = 120.0,
        context_window: int | None = None,
    ) -> None:
        self.url = url.rstrip("/").removesuffix("/v1")
        self._model = model
        self.api_key = api_key
        self._max_concurrency = max(1, max_concurrency)
        self._slots = threading.BoundedSemaphore(self._max_concurrency)
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._context_window = context_window
        self.on_stream_error = None  # a hook: the vLLM manager adds "the server process died"
        # Thinking models: [llm] thinking (None: the model's default) is sent as the chat template's
        # enable_thinking; thinking_budget is kept by DocDesk (engine/generation/generate.py).
        self.thinking: bool | None = None
        self.thinking_budget: int | None = None
        self.slow_streaks = SlowStreaks()

    @cached_property
    def _client(self):
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        timeout = httpx.Timeout(self._read_timeout, connect=self._connect_timeout)
        limits = httpx.Limits(max_connections=self._max_concurrency + 2)
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout, limits=limits)

    # -- discovery --------------------------------------------------------------
    def served_models(self) -> list[dict]:
        response = self._request("GET", "/v1/models")
        return response.json().get("data", [])

    @cached_property
    def _model_info(self) -> dict:
        served = self.served_models()
        names = [m.get("id", "") for m in served]
        if not names:
            raise ServerError(f"the server at {self.url} serves no model")
        if self._model is None:
            return served[0]
        for entry in served:
            if entry.get("id") == self._model:
                return entry
        raise ModelNotFound(f"model {self._model} not served; served: {', '.join(names)}")

    @property
    def model(self) -> str:
        return self._model_info["id"]

    @property
    def context_window(self) -> int:
        if self._context_window:
            return self._context_window
        info = self._model_info  # vLLM reports max_model_len; llama.cpp's server reports n_ctx in meta
        found = info.get("max_model_len") or (info.get("meta") or {}).get("n_ctx_train")
        return int(found) if found else 4096

    @property
    def max_concurrency(self) -> int:
        return self._max_concurrency

    @property
    def on_gpu(self) -> bool:
        # A server's hardware cannot be seen from here; servers worth pointing DocDesk at run on a
        # GPU, so answers and summaries plan for one (the llama_server backend knows its own).
        return True

    @property
    def capabilities(self) -> Capabilities:
        """Someone's server: streamed, `max_concurrency` at once, log-probabilities asked for (the
        OpenAI API's `logprobs`), reasoning however it sends it; a reply may begin inside its
        reasoning where [llm] thinking says so (None: the model's name decides)."""
        return Capabilities(
            parallel_slots=self._max_concurrency,
            logprobs=True,
            reasoning=Reasoning.ANY,
            thinks=self.thinking,
            thinking_budget=self.thinking_budget,
            continues_final_message=self.continues_final_message,
            gpu_offload=self.on_gpu,
            served=True,
        )

    def warm_up(self) -> None:
        """Set up the HTTP client (httpx and its connection pool); the server is asked nothing,
        so a server that starts after DocDesk is still found at the first request."""
        self._client  # noqa: B018  (a cached property: built once)

    def count_tokens(self, text: str) -> int:
        # Servers disagree on a tokenize endpoint; cl100k is a close, conservative estimate.
        return _estimate_tokens(text)

    # -- requests ---------------------------------------------------------------
    def _request(self, method: str, path: str, **kwargs):
        import httpx

        last: Exception | None = None
        for attempt in range(CONNECT_RETRIES):
            try:
                response = self._client.request(method, path, **kwargs)
            except httpx.ConnectError as exc:
                last = exc
                time.sleep(0.2 * 2**attempt)
                continue
            except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError) as exc:
                last = exc  # a dropped kept-alive connection: a new one next time (see stream_chat)
                if attempt == CONNECT_RETRIES - 1:
                    raise ServerError(
                        f"the server at {self.url} dropped the connection before answering ({exc})"
                    ) from exc
                continue
            except httpx.TimeoutException as exc:
                raise ServerError(
                    f"the server at {self.url} did not answer in time ({exc.__class__.__name__})"
                ) from exc
            self._raise_for_status(response)
            return response
        raise BackendUnavailable(f"no server at {self.url} (start it, or check the URL)") from last

    def _raise_for_status(self, response) -> None:
        if response.status_code < 400:
            return
        try:
            body = response.json()
            detail = body.get("error", body)
            detail = detail.get("message", detail) if isinstance(detail, dict) else detail
        except (ValueError, json.JSONDecodeError):
            detail = response.text[:300]
        text = str(detail)
        if response.status_code == 404 and "model" in text.lower():
            raise ModelNotFound(f"model {self._model} not served: {text}")
        if "context" in text.lower() and ("length" in text.lower() or "exceed" in text.lower()):
            raise ContextTooLong(f"the prompt is longer than the model's context: {text}")
        if response.status_code in (401, 403):
            raise ServerError(f"the server at {self.url} refused the API key ({response.status_code}): {text}")
        raise ServerError(f"the server at {self.url} answered {response.status_code}: {text}")

    def stream_chat(self, request: ChatRequest) -> Iterator[str]:
        import httpx

        payload = self._payload(request)
        stats = request.stats
        started = time.perf_counter()
        tokens = 0
        with self._slots:
            context, response = self._open_stream(payload)
            try:
                if response.status_code >= 400:
                    response.read()
                    self._raise_for_status(response)
                finished = False
                for line in response.iter_lines():
                    if request.cancel.is_set():
                        raise Cancelled("stopped")
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        finished = True
                        break
                    for piece in _pieces_of(json.loads(data), stats, tokens):
                        if tokens == 0:
                            stats.ttft_ms = (time.perf_counter() - started) * 1000
                        tokens += 1
                        yield piece
                if not finished and not stats.finish_reason:
                    raise self._stream_failure(ServerError(f"the server closed the stream after {tokens} tokens"))
            except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                raise self._stream_failure(
                    ServerError(f"the server closed the stream after {tokens} tokens ({exc})")
                ) from exc
            except httpx.ReadTimeout as exc:
                raise ServerError(f"the server stopped sending after {tokens} tokens (read timeout)") from exc
            finally:
                context.__exit__(None, None, None)
                _complete_stats(request, tokens, started)

    def yes_probability(self, messages: list[dict]) -> float:
        """The model's P(yes) / P(yes or no) for its first token of a reply to `messages`, from the
        server's top log-probabilities (engine/retrieval/rerank.py); 0.5 where it gives none."""
        body = {
            "model": self.model,
            "messages": messages,
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": 10,
            "chat_template_kwargs": {"enable_thinking": False},  # a judgement, not a thought
        }
        with self._slots:
            choice = (self._request("POST", "/v1/chat/completions", json=body).json().get("choices") or [{}])[0]
        content = (choice.get("logprobs") or {}).get("content") or [{}]
        return yes_share(content[0].get("top_logprobs") or [])

    def _payload(self, request: ChatRequest) -> dict:
        """The /v1/chat/completions body: the request's sampling, thinking as enable_thinking."""
        payload = {
            "model": self.model,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.stop:
            payload["stop"] = request.stop
        if request.top_p is not None:
            payload["top_p"] = request.top_p
        if request.seed is not None:
            payload["seed"] = request.seed
        thinking = request.thinking if request.thinking is not None else self.thinking
        if thinking is not None:  # Qwen3's and others' templates read it; servers pass it through
            payload["chat_template_kwargs"] = {"enable_thinking": thinking}
        return payload

    def _open_stream(self, payload: dict):
        """(the stream's context manager, entered; its response), with retries for a server that
        is not up yet or a kept-alive connection it dropped."""
        import httpx

        for attempt in range(CONNECT_RETRIES):
            try:
                context = self._client.stream("POST", "/v1/chat/completions", json=payload)
                return context, context.__enter__()
            except httpx.ConnectError as exc:
                if attempt == CONNECT_RETRIES - 1:
                    raise self._stream_failure(
                        BackendUnavailable(f"no server at {self.url} (start it, or check the URL)")
                    ) from exc
                time.sleep(0.2 * 2**attempt)
            except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError) as exc:
                # A kept-alive connection the server dropped (after a stream it broke off, say)
                # fails before any answer: the pool discards it and the next try gets a new one.
                if attempt == CONNECT_RETRIES - 1:
                    raise self._stream_failure(
                        ServerError(f"the server at {self.url} dropped the connection before answering ({exc})")
                    ) from exc
        raise AssertionError("unreachable: the last attempt raises")

    def _stream_failure(self, error: Exception) -> Exception:
        return self.on_stream_error(error) if self.on_stream_error else error

    def close(self) -> None:
        """Close the HTTP client; closing again does nothing."""
        if "_client" in self.__dict__:
            self._client.close()


def _complete_stats(request: ChatRequest, tokens: int, started: float) -> None:
    stats = request.stats
    stats.completion_tokens = stats.completion_tokens or tokens
    # A server that reports no usage (llama-cpp-python's ignores include_usage): the cl100k
    # estimate, a few tokens per message for the template; never the server's own tokenizer
    # here, which may be what just failed.
    stats.prompt_tokens = stats.prompt_tokens or sum(
        _estimate_tokens(m.get("content", "")) + 4 for m in request.messages
    )
    stats.total_ms = (time.perf_counter() - started) * 1000


def _pieces_of(chunk: dict, stats, tokens: int) -> list[str]:
    """One streamed chunk's text: reasoning the server parsed out (llama-server and vLLM send
    reasoning_content, some newer servers reasoning) as ReasoningPiece, then the answer's text;
    its usage and finish reason go into `stats`."""
    if usage := chunk.get("usage"):
        stats.prompt_tokens = usage.get("prompt_tokens", 0)
        stats.completion_tokens = usage.get("completion_tokens", tokens)
        stats.reasoning_tokens = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    if error := chunk.get("error"):  # an error event mid-stream: the reply broke off, it is no answer
        message = error.get("message", error) if isinstance(error, dict) else error
        raise ServerError(f"the server reported an error after {tokens} tokens: {str(message)[:300]}")
    out: list[str] = []
    for choice in chunk.get("choices", []):
        if choice.get("finish_reason"):
            stats.finish_reason = choice["finish_reason"]
        delta = choice.get("delta") or {}
        thought = delta.get("reasoning_content") or delta.get("reasoning")
        if thought and isinstance(thought, str):
            out.append(ReasoningPiece(thought))
        if piece := delta.get("content"):
            out.append(piece)
    return out

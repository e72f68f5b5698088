"""The OpenAI chat-completions wire format as DocDesk speaks it: what a request may hold, and
the completion, chunk and error objects sent back (https://platform.openai.com/docs/api-reference/chat).

No web framework here: plain dicts in and out, so the rules are tested without a server.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from app.desk.answering import Answered
from app.desk.refs import MAX_DOC_IDS
from engine.answer import Sampling, Turn
from ingest.records import CitedSource

MODEL = "docdesk"
SOURCES_HEADING = "\n\nSources:\n"


class ApiError(Exception):
    """An error the client caused or must know about, as OpenAI's `{"error": {...}}` object."""

    def __init__(
        self, status: int, message: str, kind: str = "invalid_request_error", code: str | None = None, param=None
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.kind, self.code, self.param = status, message, kind, code, param
        self.headers: dict[str, str] = {}

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}


@dataclass
class AskCall:
    """One chat-completions request, as DocDesk answers it."""

    question: str  # the last user message
    history: list[Turn] = field(default_factory=list)  # the exchanges before it, oldest first
    doc_ids: list[str] | None = None  # docdesk.doc_ids: search only these documents
    stream: bool = False
    include_usage: bool = False  # stream_options.include_usage: a last chunk with the token counts
    sources_in_text: bool = True  # docdesk.sources_in_text: a "Sources:" list after the answer
    sampling: Sampling | None = None  # max_tokens, temperature, top_p, stop, seed as the client asked


def _text_of(content, param: str) -> str:
    """A message's text: a string, or the text parts of a content list (images are not read)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") in ("text", "input_text")]
        return "\n".join(p for p in parts if isinstance(p, str))
    raise ApiError(400, f"{param} must be a string or a list of content parts", param=param)


def without_sources(answer: str) -> str:
    """An earlier answer as the model should see it again: without the Sources list DocDesk added."""
    cut = answer.rfind(SOURCES_HEADING)
    return answer[:cut] if cut >= 0 else answer


def _history(said: list[tuple[str, str]]) -> list[Turn]:
    """The exchanges before the question: user messages in a row are one question."""
    history: list[Turn] = []
    asked: str | None = None
    for role, text in said:
        if role == "user":
            asked = text if asked is None else f"{asked}\n{text}"
        elif asked is not None:
            history.append(Turn(asked, without_sources(text)))
            asked = None
    return history


def _doc_ids(refs, resolve: Callable[[str], str]) -> list[str] | None:
    if refs is None:
        return None
    if not isinstance(refs, list) or not all(isinstance(d, str) for d in refs):
        raise ApiError(400, "docdesk.doc_ids must be a list of document ids", param="docdesk.doc_ids")
    if len(refs) > MAX_DOC_IDS:
        raise ApiError(
            400, f"docdesk.doc_ids names {len(refs):,} documents: at most {MAX_DOC_IDS:,}", param="docdesk.doc_ids"
        )
    resolved = []
    for ref in refs:
        try:
            resolved.append(resolve(ref))
        except LookupError as exc:
            raise ApiError(404, str(exc), code="document_not_found", param="docdesk.doc_ids") from None
    return resolved or None


def decode_body(body: bytes):
    """The request's JSON, or a 400 for anything that is not JSON DocDesk can keep as text."""
    try:
        payload = json.loads(body)
        json.dumps(payload, ensure_ascii=False).encode("utf-8")  # a lone surrogate ("\\ud800") is not text
    except (ValueError, RecursionError) as exc:  # bad JSON, bad UTF-8, nesting or numbers past Python's limits
        reason = str(exc) if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        raise ApiError(400, f"We could not parse the JSON body of your request ({reason})") from None
    return payload


def parse_call(payload, resolve: Callable[[str], str]) -> AskCall:
    """The request body as an AskCall; raises ApiError (400, or 404 for another model).
    `resolve` turns a document reference (id, id prefix, path) into its id, or raises LookupError."""
    if not isinstance(payload, dict):
        raise ApiError(400, "the request body must be a JSON object")
    model = payload.get("model")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "you must provide a model parameter: this server has one model, 'docdesk'", param="model")
    if model != MODEL:
        raise ApiError(
            404,
            f"The model '{model}' does not exist: this server has one model, 'docdesk' (answers from your library)",
            code="model_not_found",
            param="model",
        )
    messages = payload.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "messages must be a non-empty list of {role, content} objects", param="messages")
    said: list[tuple[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ApiError(400, f"messages[{i}] must be an object with a role", param=f"messages[{i}]")
        said.append((message["role"], _text_of(message.get("content"), f"messages[{i}].content")))
    # The client's own system prompt is not used: DocDesk's prompt is what makes answers cite.
    said = [(role, text) for role, text in said if role in ("user", "assistant") and text.strip()]
    if not said or said[-1][0] != "user":
        raise ApiError(400, "the last message must be the user's question", param="messages")
    if sum(len(text) for _, text in said) > MAX_MESSAGES_CHARS:
        raise ApiError(413, f"the messages are longer than {MAX_MESSAGES_CHARS:,} characters", param="messages")
    asked = len(said)
    while asked > 0 and said[asked - 1][0] == "user":  # user messages in a row at the end: one question
        asked -= 1
    extension = payload.get("docdesk", {})
    if not isinstance(extension, dict):
        raise ApiError(400, 'docdesk must be an object such as {"doc_ids": ["..."]}', param="docdesk")
    sources_in_text = extension.get("sources_in_text", True)
    if not isinstance(sources_in_text, bool):
        raise ApiError(400, "docdesk.sources_in_text must be true or false", param="docdesk.sources_in_text")
    stream = payload.get("stream", False)
    if not isinstance(stream, bool):
        raise ApiError(400, "stream must be true or false", param="stream")
    options = payload.get("stream_options") or {}
    sampling = parse_sampling(payload)
    question = "\n".join(text for _, text in said[asked:])
    if len(question) > MAX_QUESTION_CHARS:
        raise ApiError(
            413, f"the question is {len(question):,} characters: at most {MAX_QUESTION_CHARS:,}", param="messages"
        )
    return AskCall(
        question=question,
        history=_history(said[:asked]),
        doc_ids=_doc_ids(extension.get("doc_ids"), resolve),
        stream=stream,
        include_usage=bool(isinstance(options, dict) and options.get("include_usage")),
        sources_in_text=sources_in_text,
        sampling=sampling,
    )


# OpenAI's ranges; a value outside them is the client's mistake (400), as OpenAI answers it.
_RANGES = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}
MAX_STOPS = 4  # OpenAI's limit on stop sequences
SEED_RANGE = (-(2**63), 2**63 - 1)  # OpenAI's seed is a 64-bit integer
# A question longer than this is not a question (the longest context DocDesk plans holds ~30,000
# tokens of it): refused with 413 before anything reads it, so one request cannot hold a core.
MAX_QUESTION_CHARS = 32_000
MAX_MESSAGES_CHARS = 200_000  # the whole conversation sent along


def _number(payload: dict, name: str, kind: type, low=None, high=None):
    value = payload.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or (kind is int and not isinstance(value, int)):
        raise ApiError(400, f"{name} must be {'an integer' if kind is int else 'a number'}", param=name)
    if not math.isfinite(value):  # json reads NaN and Infinity; no sampler means anything by them
        raise ApiError(400, f"{name} must be a finite number, not {value}", param=name)
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ApiError(400, f"{name} must be {bounds}, not {value}", param=name)
    return kind(value)


def parse_sampling(payload: dict) -> Sampling | None:
    """The request's sampling: `max_tokens` (or `max_completion_tokens`), `temperature`, `top_p`,
    `stop` (a string or up to four), `seed`. They apply within DocDesk's limits: max_tokens may
    lower the answer's budget ([answers] answer_tokens), never raise it."""
    limit = payload.get("max_completion_tokens", payload.get("max_tokens"))
    max_tokens = _number({"max_tokens": limit}, "max_tokens", int, 1)
    temperature = _number(payload, "temperature", float, *_RANGES["temperature"])
    top_p = _number(payload, "top_p", float, *_RANGES["top_p"])
    seed = _number(payload, "seed", int, *SEED_RANGE)
    stop = payload.get("stop")
    if stop is None:
        stops: tuple[str, ...] = ()
    elif isinstance(stop, str):
        stops = (stop,) if stop else ()
    elif isinstance(stop, list) and all(isinstance(x, str) for x in stop) and len(stop) <= MAX_STOPS:
        stops = tuple(x for x in stop if x)
    else:
        raise ApiError(400, f"stop must be a string or a list of at most {MAX_STOPS} strings", param="stop")
    if max_tokens is None and temperature is None and top_p is None and seed is None and not stops:
        return None
    return Sampling(max_tokens, temperature, top_p, stops, seed)


# -- what goes back -----------------------------------------------------------------------------
def source_json(source: CitedSource) -> dict:
    return {
        "n": source.n,
        "title": source.title,
        "path": source.path,
        "page": source.page,
        "page_end": source.page_end,
        "page_label": source.page_label,
        "doc_id": source.doc_id,
        "cited": source.cited,
    }


def sources_text(answer: Answered) -> str:
    """The Sources list as `docdesk ask` prints it, for editors that show only the text."""
    if not answer.sources:  # the sources a reader is shown: cited, else all given
        return ""
    return SOURCES_HEADING + "\n".join(f"{s.label} ({s.path})" for s in answer.sources)


def finish_reason(answer: Answered) -> str:
    return "length" if answer.stats.finish_reason == "length" else "stop"


def usage(answer: Answered) -> dict:
    """OpenAI's usage: completion tokens include the reasoning, counted apart in its details."""
    prompt, completion = answer.stats.prompt_tokens, answer.stats.completion_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "completion_tokens_details": {"reasoning_tokens": answer.stats.reasoning_tokens},
    }


class Reply:
    """The objects of one answer: a completion, or the chunks of a stream; one id and time for all."""

    def __init__(self) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        self.created = int(time.time())

    def _head(self, kind: str) -> dict:
        return {"id": self.id, "object": kind, "created": self.created, "model": MODEL}

    def completion(self, answer: Answered, sources_in_text: bool) -> dict:
        text = answer.text + (sources_text(answer) if sources_in_text else "")
        return {
            **self._head("chat.completion"),
            "choices": [
                {
                    "index": 0,
                    # reasoning_content as llama-server and vLLM name a thinking model's reasoning
                    "message": {"role": "assistant", "content": text}
                    | ({"reasoning_content": answer.reasoning} if answer.reasoning else {}),
                    "finish_reason": finish_reason(answer),
                }
            ],
            "usage": usage(answer),
            "sources": [source_json(s) for s in answer.given],
        }

    def chunk(self, delta: dict, finish: str | None = None, **extra) -> dict:
        return {
            **self._head("chat.completion.chunk"),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }

    def last_chunk(self, answer: Answered) -> dict:
        """The closing chunk: why it ended, and the sources (the text streamed before it)."""
        return self.chunk({}, finish_reason(answer), sources=[source_json(s) for s in answer.given], answer=answer.text)

    def usage_chunk(self, answer: Answered) -> dict:
        return {**self._head("chat.completion.chunk"), "choices": [], "usage": usage(answer)}


def model_card() -> dict:
    return {"id": MODEL, "object": "model", "created": 0, "owned_by": "docdesk"}


def models_list() -> dict:
    return {"object": "list", "data": [model_card()]}

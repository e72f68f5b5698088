"""Thinking through the real llama.cpp server with a real thinking template: llama-server (`make
llama-server`) runs the bundled model under DeepSeek-R1-Distill's own chat template (kept in
tests/data/templates/, which opens `<think>` in the generation prompt) with --reasoning-format
deepseek, so the reasoning comes apart as reasoning_content. The bundled 135M model is no thinking
model and never closes its thinking: DocDesk sees the reply end mid-thought and asks again with
the thinking given back closed (budget forcing through the server's continuation of a final
assistant message), and gets an answer apart from the reasoning. What the model says is not
judged: this checks the machinery on a real server and template."""

from __future__ import annotations

import subprocess
import time

import pytest

from engine.backends import ChatRequest
from engine.backends.llama_server import find_executable
from engine.backends.managed_server import free_port
from engine.errors import BackendUnavailable
from engine.generation.generate import Reply, pieces
from tests.conftest import ROOT

pytestmark = pytest.mark.models
TEMPLATE = ROOT / "tests" / "data" / "templates" / "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"


@pytest.fixture(scope="module")
def thinking_server():
    import httpx

    from engine.backends.llama_cpp import bundled_model_path

    try:
        executable = find_executable(None)
    except BackendUnavailable:
        pytest.skip("no llama-server: run `make llama-server`")
    port = free_port()
    command = [executable, "-m", str(bundled_model_path()), "--host", "127.0.0.1", "--port", str(port)]
    command += ["-c", "2048", "-t", "2", "--jinja", "--chat-template-file", str(TEMPLATE)]
    command += ["--reasoning-format", "deepseek"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    else:
        process.kill()
        pytest.fail("llama-server did not become healthy")
    yield url
    process.terminate()
    process.wait(30)


def test_a_reply_cut_mid_thought_is_answered_apart_from_its_reasoning(thinking_server):
    from engine.backends.openai_http import OpenAIBackend

    backend = OpenAIBackend(thinking_server)
    backend.continues_final_message = True  # as DocDesk's llama_server backend says of llama-server
    request = ChatRequest([{"role": "user", "content": "What is the capital of France?"}], max_tokens=24)
    request.temperature = 0.0
    reply = Reply()
    try:
        got = list(pieces(backend, request, reply))
    finally:
        backend.close()
    assert reply.reasoning  # it came as reasoning_content: the template opened <think>
    assert reply.answer.strip()  # and an answer came after it, on the second request
    assert "<think>" not in reply.answer and "</think>" not in reply.answer
    assert reply.reasoning[:30] not in reply.answer
    assert "".join(p.text for p in got if not p.reasoning and not p.restart).strip() == reply.answer.strip()

"""The OpenAI client and the vLLM process manager against real servers on loopback:
llama.cpp's own OpenAI-compatible server with the bundled model, and a stand-in that
serves several requests at once."""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from engine.backends import LlmSettings, create_backend
from engine.backends.base import ChatRequest
from engine.backends.managed_server import group_alive, group_members
from engine.backends.openai_http import OpenAIBackend
from engine.backends.vllm_server import VllmServer, VllmSettings, build_command, free_port
from engine.errors import BackendUnavailable, ModelNotFound, ServerError
from tests.contracts.backend_contract import BackendContract, check_process_group_gone
from tests.servers import llama_server_command

pytestmark = pytest.mark.models
STANDIN = Path(__file__).with_name("standin_server.py")


def ask(text: str, max_tokens: int = 64) -> ChatRequest:
    return ChatRequest([{"role": "user", "content": text}], max_tokens=max_tokens, temperature=0.0)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] == "Z"
    except FileNotFoundError:
        return True


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    server = VllmServer(
        VllmSettings(model="", command=llama_server_command(), startup_timeout=120), tmp_path_factory.mktemp("logs")
    ).start()
    yield server
    server.close()


def vllm_settings() -> LlmSettings:
    """The vLLM backend as create_backend builds it, with llama.cpp's OpenAI-compatible server in
    vLLM's place: vLLM needs an NVIDIA GPU and cannot be installed here, and what DocDesk's vLLM
    backend does (start, health wait, stream, stop) is the same over any such server. That
    server answers one request at a time (a new one interrupts the one streaming), so one slot.

    A prompt longer than its context gets "200 OK" and an empty stream from it (its log says
    "Requested tokens exceed context window"), so the client can only report the closed
    stream (ServerError); vLLM and llama-server answer 400 with the reason (ContextTooLong)."""
    vllm = {"command": llama_server_command(), "startup_timeout": 120, "max_num_seqs": 1}
    return LlmSettings(backend="vllm", context=2048, vllm=vllm)


@pytest.fixture(scope="module")
def vllm_backend(tmp_path_factory):
    backend = create_backend(vllm_settings(), log_dir=tmp_path_factory.mktemp("vllm-logs"), has_bf16=False)
    yield backend
    backend.close()


class TestOpenAIContract(BackendContract):
    """The OpenAI-compatible client against llama.cpp's own server running the bundled model."""

    too_long_error = ServerError  # see vllm_settings

    @pytest.fixture
    def backend(self, llama_server):
        backend = self.make_backend(llama_server.url)
        yield backend
        backend.close()

    @pytest.fixture(autouse=True)
    def _server(self, llama_server):
        self.url = llama_server.url

    def make_backend(self, url: str | None = None):
        settings = LlmSettings(backend="openai", url=url or self.url, model="smollm2", max_concurrency=1, context=2048)
        return create_backend(settings)

    def warm_state(self, backend) -> object:
        return backend._client

    def check_released(self, backend, state) -> None:
        assert state.is_closed


class TestVllmContract(BackendContract):
    """The vLLM backend: DocDesk's process manager and client, for real, over a real server."""

    too_long_error = ServerError  # see vllm_settings

    @pytest.fixture
    def backend(self, vllm_backend):
        return vllm_backend

    @pytest.fixture(autouse=True)
    def _logs(self, tmp_path):
        self.log_dir = tmp_path

    def make_backend(self):
        return create_backend(vllm_settings(), log_dir=self.log_dir, has_bf16=False)

    def warm_state(self, backend) -> object:
        return backend._client, backend._process

    def check_released(self, backend, state) -> None:
        check_process_group_gone(backend, state)


def test_manager_streams_an_answer_through_llama_cpp_server(llama_server):
    assert [m["id"] for m in llama_server.served_models()] == ["smollm2"]
    request = ask("What is the capital of France? Answer in one sentence.")
    text = "".join(llama_server.stream_chat(request))
    assert "Paris" in text
    assert request.stats.completion_tokens > 3 and request.stats.ttft_ms > 0


def test_a_model_the_server_does_not_serve_is_named(llama_server):
    client = OpenAIBackend(llama_server.url, model="qwen-27b")
    with pytest.raises(ModelNotFound, match="model qwen-27b not served; served: smollm2"):
        list(client.stream_chat(ask("hi")))


def test_no_server_at_the_url_is_said_plainly():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(BackendUnavailable, match=f"no server at {url}"):
        list(OpenAIBackend(url).stream_chat(ask("hi")))


def test_killing_the_server_mid_stream_is_reported_and_nothing_is_left_behind(tmp_path):
    server = VllmServer(VllmSettings(model="", command=llama_server_command(), startup_timeout=120), tmp_path).start()
    pid = server._process.pid
    request = ask("Write a long story about a lighthouse keeper and the sea.", max_tokens=400)
    received = 0
    with pytest.raises(ServerError, match=r"closed the stream after \d+ tokens.*the server process died"):
        for _ in server.stream_chat(request):
            received += 1
            if received == 3:
                os.killpg(pid, signal.SIGKILL)
    assert received >= 3
    server.close()
    assert _gone(pid)
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)  # the whole process group is gone


def test_close_stops_the_whole_process_group(tmp_path):
    # The "server" starts a worker child in its own group, as vLLM does with its engine process.
    script = (
        "import subprocess, sys, time, http.server, threading;"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']);"
        "port = int(sys.argv[1]);"
        "h = type('H', (http.server.BaseHTTPRequestHandler,), {'do_GET': lambda s: (s.send_response(200), s.end_headers()),"
        " 'log_message': lambda *a: None});"
        "http.server.HTTPServer(('127.0.0.1', port), h).serve_forever()"
    )
    server = VllmServer(
        VllmSettings(model="", command=[sys.executable, "-c", script, "{port}"], startup_timeout=30), tmp_path
    ).start()
    group = server._process.pid
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(group_members(group)) < 2:
        time.sleep(0.1)
    members = group_members(group)
    assert len(members) >= 2, "the fake server should have started its worker"
    server.close()
    # at once: close() returns only when nothing of the group runs (the next model needs the GPU)
    assert not group_alive(group)
    assert all(_gone(pid) for pid in members)


def test_a_server_that_never_becomes_healthy_times_out_with_its_log(tmp_path):
    command = [sys.executable, "-c", "print('loading weights...', flush=True); import time; time.sleep(120)"]
    server = VllmServer(VllmSettings(model="", command=command, startup_timeout=3), tmp_path)
    started = time.monotonic()
    with pytest.raises(ServerError, match="did not become healthy within 3 s(.|\n)*loading weights"):
        server.start()
    assert time.monotonic() - started < 30
    assert not server.running


def test_a_server_that_exits_at_start_shows_the_last_log_lines(tmp_path):
    command = [sys.executable, "-c", "import sys; print('CUDA error: no kernel image for sm_70'); sys.exit(3)"]
    with pytest.raises(ServerError, match="exited during start-up \\(code 3\\)(.|\n)*no kernel image for sm_70"):
        VllmServer(VllmSettings(model="", command=command, startup_timeout=30), tmp_path).start()


def test_a_port_already_taken_is_refused_before_starting(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(BackendUnavailable, match=f"port {port} is already taken"):
            VllmServer(VllmSettings(model="m", port=port, command=["true"]), tmp_path)


def test_vllm_command_has_safe_defaults(monkeypatch):
    import engine.backends.vllm_server as manager

    if manager._vllm_importable() or manager.shutil.which("vllm"):
        pytest.skip("vLLM is installed here; the missing-vLLM message cannot be checked")
    with pytest.raises(BackendUnavailable, match=r"pip install 'docdesk\[vllm\]'"):
        build_command(VllmSettings(model="Qwen/Qwen2.5-32B-Instruct-GPTQ-Int4"), 8123, has_bf16=False)
    monkeypatch.setattr(manager, "_vllm_importable", lambda: True)  # past the install check: the flags themselves
    command = build_command(
        VllmSettings(model="Qwen/Qwen2.5-32B-Instruct-GPTQ-Int4", quantization="gptq", max_num_batched_tokens=8192),
        8123,
        has_bf16=False,
    )
    joined = " ".join(command)
    for flag in (
        "--host 127.0.0.1",
        "--port 8123",
        "--dtype half",
        "--max-model-len 8192",
        "--gpu-memory-utilization 0.9",
        "--max-num-seqs 16",
        "--max-num-batched-tokens 8192",
        "--enable-prefix-caching",
        "--quantization gptq",
    ):
        assert flag in joined
    assert "--dtype auto" in " ".join(build_command(VllmSettings(model="m"), 8123, has_bf16=True))


def test_concurrent_streams_overlap_on_a_server_that_serves_several(tmp_path):
    port = free_port()
    server = VllmServer(
        VllmSettings(
            model="", command=[sys.executable, str(STANDIN), "{port}", "0.5", "4"], port=port, startup_timeout=30
        ),
        tmp_path,
        max_concurrency=4,
    ).start()
    try:
        client = OpenAIBackend(server.url, model="standin", max_concurrency=4)
        started = time.perf_counter()
        assert "".join(client.stream_chat(ask("one"))) == "This is a stand-in reply."
        one = time.perf_counter() - started
        started = time.perf_counter()
        with ThreadPoolExecutor(4) as pool:
            texts = list(pool.map(lambda n: "".join(client.stream_chat(ask(str(n)))), range(4)))
        four = time.perf_counter() - started
        assert texts == ["This is a stand-in reply."] * 4
        assert four < 2 * one, f"4 concurrent took {four:.2f}s against {one:.2f}s for one"
        # A client limited to one request at a time serializes them.
        serial = OpenAIBackend(server.url, model="standin", max_concurrency=1)
        started = time.perf_counter()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda n: "".join(serial.stream_chat(ask(str(n)))), range(4)))
        assert time.perf_counter() - started > 3.5 * 0.5
    finally:
        server.close()


def test_stream_cancel_stops_reading(llama_server):
    request = ask("Write a long story about a lighthouse keeper.", max_tokens=300)
    from engine.errors import Cancelled

    seen = 0
    with pytest.raises(Cancelled):
        for _ in llama_server.stream_chat(request):
            seen += 1
            if seen == 3:
                request.cancel.set()
    assert seen == 3
    # The server stays usable afterwards.
    assert "".join(llama_server.stream_chat(ask("Say hello.", max_tokens=8)))

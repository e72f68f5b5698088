"""The empty chat guides a first run: three steps, the bundled model and a real one, and the GPU
situation in one sentence from the doctor."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from types import SimpleNamespace  # noqa: E402

from app.desk.doctor_text import GIB, gpu_situation  # noqa: E402
from app.gui.chat_pane import ChatPane  # noqa: E402
from app.gui.first_run import FirstRunGuide  # noqa: E402
from app.gui.format_list import formats_phrase  # noqa: E402

V100 = {"name": "Tesla V100-SXM2-16GB", "vram_bytes": 16 * GIB}


@pytest.fixture
def pane(qtbot):
    pane = ChatPane()
    qtbot.addWidget(pane)
    return pane


def test_an_empty_chat_shows_three_steps_the_model_and_the_gpu(pane):
    text = pane.transcript.toPlainText()
    assert "Start in three steps" in text
    assert "Add documents: drop them on the window, or press Ctrl+O" in text and formats_phrase() in text
    assert "Ask a question" in text and "Choose a model in Settings → Model." in text
    assert "SmolLM2-135M-Instruct, a 135M-parameter demonstration model" in text and "answers poorly" in text
    assert "GGUF file" in text and "Q4_K_M" in text and "OpenAI-compatible server" in text
    assert "Checking this machine's GPU…" in text  # shown at once; the sentence comes when known

    pane.set_first_run_note("No NVIDIA GPU here: answers run on the CPU.")
    text = pane.transcript.toPlainText()
    assert "No NVIDIA GPU here: answers run on the CPU." in text and "Checking" not in text

    pane.show_messages([{"role": "user", "text": "hello"}])
    pane.set_first_run_note("later")  # a chat is shown: the note waits for the next empty one
    assert "Start in three steps" not in pane.transcript.toPlainText()
    pane.new_chat()
    assert "later" in pane.transcript.toPlainText()


def test_the_gpu_sentence_says_what_runs_where_and_what_to_do(qapp):
    def situation(gpus, offload):
        return gpu_situation({"gpus": gpus, "llama_cpp_gpu_offload": offload})

    guide = FirstRunGuide()
    assert "answers run on the CPU" in guide.gpu_sentence(situation([], True))
    assert situation([V100], False) == ("cpu-build", V100["name"], 16.0)
    cpu_build = guide.gpu_sentence(situation([V100], False))
    assert V100["name"] in cpu_build and "cannot offload" in cpu_build and "`make run`" in cpu_build
    assert "nvcc" in cpu_build
    assert "16 GiB" in guide.gpu_sentence(situation([V100], True))
    assert "not installed" in guide.gpu_sentence(situation([V100], None))
    assert "cannot" not in guide.gpu_sentence(situation([V100], False), "vllm")  # vLLM has its own build
    for sentence in (guide.gpu_sentence(situation(g, o)) for g in ([], [V100]) for o in (True, False, None)):
        assert sentence.count(".") <= 2 and sentence.endswith(".")  # one sentence


def test_the_check_runs_the_doctor_off_the_gui_thread(pane, qtbot, monkeypatch):
    import threading

    import engine.models.doctor
    from app.gui.tasks import Workers

    threads = []

    def report(*_args):
        threads.append(threading.current_thread())
        return {"gpus": [], "llama_cpp_gpu_offload": True}

    monkeypatch.setattr(engine.models.doctor, "report", report)
    workers = Workers()
    try:
        pane.check_gpu(workers, SimpleNamespace(backend="llama_cpp", url=""))
        qtbot.waitUntil(lambda: "answers run on the CPU" in pane.transcript.toPlainText(), timeout=5_000)
        assert threads and threads[0] is not threading.main_thread()
    finally:
        workers.shutdown()
    pane.check_gpu(None, SimpleNamespace(backend="openai", url="http://127.0.0.1:8000"))
    assert "server at http://127.0.0.1:8000" in pane.transcript.toPlainText()

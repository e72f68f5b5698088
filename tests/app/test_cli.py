"""The CLI as a user runs it: real subprocesses, a library in a temporary folder, JSON checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLES

pytestmark = pytest.mark.models


def run(
    library: Path, *args: str, check_code: int | None = 0, config: Path | None = None
) -> subprocess.CompletedProcess:
    env = dict(os.environ, DOCDESK_HOME=str(library))
    if config is not None:
        env["DOCDESK_CONFIG"] = str(config)
    proc = subprocess.run([sys.executable, "-m", "app", *args], env=env, capture_output=True, text=True, timeout=600)
    if check_code is not None:
        assert proc.returncode == check_code, proc.stderr
    return proc


def test_add_list_search_remove_with_json(tmp_path, corpus):
    lib = tmp_path / "lib"
    added = run(lib, "add", str(SAMPLES), str(corpus / "broken" / "html-named.pdf"), "--json", check_code=1)
    report = json.loads(added.stdout)
    assert set(report) >= {"added", "skipped", "failed"}
    assert {a["path"].rsplit("/", 1)[1] for a in report["added"]} == {
        "docdesk-guide.md",
        "docdesk-guide.pdf",
        "docdesk-guide-zh.md",
        "docdesk-guide-zh.pdf",
    }
    for entry in report["added"]:
        assert set(entry) >= {"doc_id", "path", "title", "pages", "blocks", "passages", "status"}
        assert len(entry["doc_id"]) == 64 and entry["status"] == "indexed"
    assert report["failed"] == [
        {
            "doc_id": report["failed"][0]["doc_id"],
            "path": str(corpus / "broken" / "html-named.pdf"),
            "reason": "named .pdf but the content is HTML, not a PDF",
        }
    ]
    assert "files" in added.stderr  # the progress bar

    listed = json.loads(run(lib, "list", "--json").stdout)["documents"]
    assert len(listed) == 5
    keys = {"doc_id", "path", "title", "format", "pages", "blocks", "passages", "status", "reason"}
    assert all(keys <= set(d) for d in listed)
    pdf = next(d for d in listed if d["path"].endswith("docdesk-guide.pdf"))
    assert pdf["format"] == "pdf" and pdf["pages"] == 7 and pdf["title"] == "DocDesk User Guide"

    found = json.loads(run(lib, "search", "which", "command", "rescans", "folders", "-k", "3", "--json").stdout)
    assert found["query"] == "which command rescans folders"
    assert len(found["results"]) == 3
    assert set(found["results"][0]) >= {"doc_id", "title", "path", "page", "text", "score"}
    assert "docdesk sync" in found["results"][0]["text"]
    scores = [r["score"] for r in found["results"]]
    assert scores == sorted(scores, reverse=True)

    again = json.loads(run(lib, "add", str(SAMPLES), "--json").stdout)
    assert again["added"] == [] and len(again["skipped"]) == 4

    removed = run(lib, "remove", pdf["doc_id"][:12], "--json")
    assert json.loads(removed.stdout)["removed"][0]["doc_id"] == pdf["doc_id"]
    assert len(json.loads(run(lib, "list", "--json").stdout)["documents"]) == 4
    missing = run(lib, "remove", "no-such-document", check_code=2)
    assert missing.stderr.startswith("docdesk: no document") and "Traceback" not in missing.stderr


def test_encrypted_pdf_with_password_and_sync_of_a_remembered_folder(tmp_path, corpus):
    lib = tmp_path / "lib"
    encrypted = corpus / "pdf-samples/005-libreoffice-writer-password/libreoffice-writer-password.pdf"
    failed = json.loads(run(lib, "add", str(encrypted), "--json", check_code=1).stdout)
    assert failed["failed"][0]["reason"].startswith("encrypted: a password is needed")
    ok = json.loads(run(lib, "add", str(encrypted), "--password", "openpassword", "--json").stdout)
    assert ok["added"][0]["status"] == "indexed"

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "one.txt").write_text("The first note is about sailing boats.", encoding="utf-8")
    run(lib, "add", str(folder))
    (folder / "two.md").write_text("# Second\n\nThe second note is about mountain huts.", encoding="utf-8")
    (folder / "one.txt").unlink()
    synced = json.loads(run(lib, "sync", "--json").stdout)
    assert [a["path"] for a in synced["added"]] == [str(folder / "two.md")]
    assert [r["path"] for r in synced["removed"]] == [str(folder / "one.txt")]


def test_add_and_sync_print_plain_progress_lines_when_stderr_is_a_pipe(tmp_path):
    """From cron or a pipe: a line for each file on stderr, no bar redrawn with carriage returns,
    and stdout holds the JSON alone."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "one.md").write_text("# One\n\nThe first note is about river boats.", encoding="utf-8")
    (folder / "two.md").write_text("# Two\n\nThe second note is about mountain huts.", encoding="utf-8")
    added = run(tmp_path / "lib", "add", str(folder), "--json")
    assert len(json.loads(added.stdout)["added"]) == 2
    for name in ("one.md", "two.md"):
        assert f"passages · indexed {folder / name} (" in added.stderr
    assert "\r" not in added.stderr and "\x1b" not in added.stderr
    (folder / "three.md").write_text("# Three\n\nThe third note is about lighthouses.", encoding="utf-8")
    synced = run(tmp_path / "lib", "sync", "--json")
    assert [Path(a["path"]).name for a in json.loads(synced.stdout)["added"]] == ["three.md"]
    assert f"1/1 files · 1 pages · 1 passages · indexed {folder / 'three.md'} (1 pages, 1 passages)" in synced.stderr


def test_list_does_not_import_torch(tmp_path):
    env = dict(os.environ, DOCDESK_HOME=str(tmp_path / "lib"))
    code = "import sys; from app.cli.main import main; main(['list']); assert 'torch' not in sys.modules; assert 'faiss' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, timeout=60)


def test_bad_library_folder_gives_one_line(tmp_path):
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x")
    proc = run(blocker, "list", check_code=2)
    assert proc.stderr.startswith("docdesk: ") and "Traceback" not in proc.stderr


def test_network_guard_reaches_child_processes():
    # Blocked inside Python before any packet leaves: the address is never contacted.
    code = "import socket; s = socket.socket(); s.connect(('192.0.2.1', 9))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "tried to reach the network" in proc.stderr


def test_chat_json_with_the_bundled_model(tmp_path):
    proc = run(
        tmp_path / "lib", "chat", "What", "is", "the", "capital", "of", "France?", "--max-tokens", "24", "--json"
    )
    payload = json.loads(proc.stdout)
    assert set(payload) == {
        "text",
        "reasoning",
        "reasoning_tokens",
        "backend",
        "model",
        "prompt_tokens",
        "completion_tokens",
        "ttft_ms",
        "total_ms",
        "tokens_per_s",
    }
    assert payload["backend"] == "llama_cpp" and payload["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert payload["reasoning"] == "" and payload["reasoning_tokens"] == 0  # the bundled model does not think
    assert payload["text"] and 0 < payload["completion_tokens"] <= 24 and payload["tokens_per_s"] > 0


def test_chat_with_a_bad_model_or_server_gives_one_line(tmp_path):
    missing = run(tmp_path / "lib", "chat", "hi", "--model", str(tmp_path / "none.gguf"), check_code=2)
    assert missing.stderr.startswith("docdesk: model file not found") and "Traceback" not in missing.stderr
    nobody = run(tmp_path / "lib", "chat", "hi", "--url", "http://127.0.0.1:9", check_code=2)
    assert "no server at http://127.0.0.1:9" in nobody.stderr and "Traceback" not in nobody.stderr


def test_doctor_plans_memory_for_a_gguf(tmp_path):
    from engine.backends.llama_cpp import bundled_model_path

    proc = run(tmp_path / "lib", "doctor", "--model", str(bundled_model_path()), "--vram", "32", "--json")
    result = json.loads(proc.stdout)
    assert result["model"]["layers"] == 30 and result["plan"]["max_context"]["f16"] == 8192
    human = run(tmp_path / "lib", "doctor", "--model", str(bundled_model_path()), "--vram", "32").stdout
    assert "largest context that fits: 8192 tokens" in human


def test_doctor_says_first_when_a_gpu_is_here_that_the_build_cannot_use(tmp_path, monkeypatch):
    from tests.fake_gpu import fake_nvidia_smi, path_with

    monkeypatch.setenv("PATH", path_with(fake_nvidia_smi(tmp_path / "bin", "7.0")))  # a V100; CI's build is CPU-only
    lines = run(tmp_path / "lib", "doctor").stdout.splitlines()
    assert lines[0].startswith("!! Tesla V100-SXM2-32GB is here, but this llama-cpp-python is a CPU-only build")
    assert "-DCMAKE_CUDA_ARCHITECTURES=70" in lines[0] and lines[1].startswith("GPU: Tesla V100")
    report = json.loads(run(tmp_path / "lib", "doctor", "--json").stdout)
    assert report["llama_cpp_gpu_offload"] is False and len(report["warnings"]) == 1
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no GPU: nothing to warn about
    assert not json.loads(run(tmp_path / "lib", "doctor", "--json").stdout)["warnings"]


def test_library_option_works_before_and_after_the_command(tmp_path):
    note = tmp_path / "note.txt"
    note.write_text("A note about the library option.", encoding="utf-8")
    before, after = tmp_path / "before", tmp_path / "after"
    env_home = tmp_path / "env-home"
    for args in (["--library", str(before), "add", str(note)], ["add", str(note), "--library", str(after)]):
        run(env_home, *args)
    assert (before / "library.sqlite").exists() and (after / "library.sqlite").exists()
    assert not (env_home / "library.sqlite").exists()
    listed = json.loads(run(env_home, "--library", str(before), "--json", "list").stdout)
    assert len(listed["documents"]) == 1


def test_ask_continue_a_chat_and_summarize_with_json(tmp_path):
    """The commands and their JSON, on the fake backend chosen in config.toml (what the real model
    answers is checked in tests/engine and tests/eval; `chat` above runs it through the CLI)."""
    lib = tmp_path / "lib"
    config = tmp_path / "config.toml"
    config.write_text('[llm]\nbackend = "fake"\n', encoding="utf-8")

    def cli(*args: str, check_code: int | None = 0) -> subprocess.CompletedProcess:
        return run(lib, *args, check_code=check_code, config=config)

    cli("add", str(SAMPLES / "docdesk-guide.pdf"))
    asked = json.loads(cli("ask", "Which Python version does DocDesk need?", "--json").stdout)
    assert set(asked) >= {"answer", "sources", "chat_id", "timings", "tokens"}
    assert set(asked["timings"]) >= {"retrieve_ms", "ttft_ms", "total_ms"}
    assert set(asked["tokens"]) == {"prompt", "completion", "reasoning"} and asked["tokens"]["completion"] > 0
    assert asked["reasoning"] == "" and asked["tokens"]["reasoning"] == 0  # the bundled model does not think
    assert asked["sources"] and all(
        set(s) >= {"n", "doc_id", "title", "path", "page", "text"} for s in asked["sources"]
    )
    assert "3.11" in asked["sources"][0]["text"]
    assert asked["answer"].startswith("Fake reply to:")  # the backend config.toml names

    follow = cli("ask", "--chat", asked["chat_id"], "And on page 2?")
    assert "Sources:" in follow.stdout and "p. 2" in follow.stdout
    assert f"--chat {asked['chat_id']}" in follow.stderr
    chats = json.loads(cli("chats", "--json").stdout)["chats"]
    assert [(c["chat_id"], c["messages"]) for c in chats] == [(asked["chat_id"], 4)]
    shown = json.loads(cli("chats", asked["chat_id"], "--json").stdout)
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant", "user", "assistant"]
    assert shown["messages"][3]["sources"]

    declined = json.loads(cli("ask", "Who painted the Mona Lisa?", "--json").stdout)
    assert declined["relevant"] is False and declined["sources"] == [] and "nothing" in declined["answer"]

    # A path that is not in the library yet is added, then summarized; the second run is all cache.
    first = json.loads(cli("summarize", str(SAMPLES / "docdesk-guide.md"), "--json").stdout)
    assert set(first) >= {"doc_id", "title", "summary", "blocks", "from_cache", "timings"}
    assert set(first["timings"]) == {"map_ms", "reduce_ms", "total_ms"}
    assert "## Overview" in first["summary"] and first["blocks"] == 1
    again = json.loads(cli("summarize", first["doc_id"][:12], "--json").stdout)
    assert again["summary"] == first["summary"] and again["from_cache"] == again["steps"]
    missing = cli("summarize", "no-such-document", check_code=2)
    assert missing.stderr.startswith("docdesk: no document")


def test_a_summary_killed_midway_resumes_from_its_cached_blocks(tmp_path):
    import signal
    import sqlite3
    import time

    lib = tmp_path / "lib"
    run(lib, "add", str(SAMPLES / "docdesk-guide.pdf"))
    # Small pieces so the guide takes several map steps; the CLI reads the same config file.
    env = dict(os.environ, DOCDESK_HOME=str(lib))
    proc = subprocess.Popen(
        [sys.executable, "-c", SUMMARIZE_IN_PIECES, "docdesk-guide.pdf"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    db = lib / "library.sqlite"
    deadline = time.monotonic() + 300
    cached = 0
    while time.monotonic() < deadline and proc.poll() is None:
        with sqlite3.connect(db) as conn:
            cached = conn.execute("SELECT count(*) FROM summary_cache").fetchone()[0]
        if cached >= 1:
            break
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert cached >= 1
    resumed = subprocess.run(
        [sys.executable, "-c", SUMMARIZE_IN_PIECES, "docdesk-guide.pdf"], env=env, capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert report["from_cache"] >= cached and report["steps"] > report["from_cache"]


# The summarizer as `docdesk summarize` builds it, with pieces of 150 tokens.
SUMMARIZE_IN_PIECES = """
import json, sys
from app.desk.settings import load_settings
from app.desk.services import DocDesk
from engine.summarize import Summarizer
desk = DocDesk(load_settings())
doc = next(d for d in desk.documents() if d.path.endswith(sys.argv[1]))
summary = Summarizer(desk.library, desk.backend(), piece_tokens=150).summarize(doc.id)
print(json.dumps(summary.as_dict()))
desk.close()
"""

"""`docdesk models` against a local Hub (tests/hub_server.py) serving the real bundled GGUF: the
catalog with verdicts from headers read by range requests, a download checked against the LFS
sha256, resumed after kill -9, a wrong hash refused, a file too big for the disk refused, and
switching to a model in config.toml. The code under test is DocDesk's, talking to the Hub through
huggingface_hub (HF_ENDPOINT points it at the local server); nothing is mocked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from engine.backends.llama_cpp import bundled_model_path
from engine.models.catalog import find, load_catalog
from tests.app.test_exit_codes import tmpfs  # noqa: F401  (a fixture: a real tmpfs)
from tests.hub_server import FakeHub, sha256_of

ROOT = Path(__file__).resolve().parents[2]
GGUF = bundled_model_path()
SIZE = GGUF.stat().st_size


@pytest.fixture
def hub():
    server = FakeHub()
    for entry in load_catalog():
        server.add(entry.repo, entry.file, GGUF)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def env(hub, tmp_path):
    return {
        **os.environ,
        "HF_ENDPOINT": hub.endpoint,
        "DOCDESK_MODELS": str(tmp_path / "models"),
        "DOCDESK_HOME": str(tmp_path / "library"),
        "DOCDESK_CONFIG": str(tmp_path / "config.toml"),
    }


def docdesk(env, *argv, timeout=120, **kwargs):
    command = [sys.executable, "-m", "app.cli.main", *argv]
    return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout, **kwargs)


def test_models_lists_the_catalog_with_verdicts_from_ranges_of_the_headers(hub, env):
    table = docdesk(env, "models")
    assert table.returncode == 0, table.stderr
    for entry in load_catalog():
        line = next(x for x in table.stdout.splitlines() if f" {entry.name} " in x)
        assert "CPU only" in line and "tokens/s" in line  # this machine has no GPU
    assert "no usable GPU" in table.stdout and "GB/s" in table.stdout
    gets = [r for r in hub.log if r.method == "GET" and "/resolve/" not in r.path and r.path.endswith(".gguf")]
    assert gets and all(r.range for r in gets) and max(r.sent for r in gets) <= 4 << 20
    assert sum(r.sent for r in gets) < SIZE  # all eleven headers cost less than one file

    data = json.loads(docdesk(env, "models", "--json").stdout)
    assert len(data["models"]) == len(load_catalog()) and data["machine"]["ram_bytes"] > 0
    first = data["models"][0]
    assert first["verdict"]["kind"] == "cpu" and first["verdict"]["fits"]
    assert first["header"]["shape"]["layers"] == 30 and first["header"]["shape"]["file_bytes"] == SIZE


def test_a_download_is_checked_against_the_lfs_sha256_and_then_used(hub, env, tmp_path):
    hub.bytes_per_second = 40 << 20  # 2.5 s: long enough for progress lines with a speed
    done = docdesk(env, "models", "download", "qwen3-4b")
    assert done.returncode == 0, done.stderr
    path = tmp_path / "models" / "Qwen--Qwen3-4B-GGUF" / "Qwen3-4B-Q4_K_M.gguf"
    assert sha256_of(path) == sha256_of(GGUF) and not path.with_name(path.name + ".incomplete").exists()
    assert "MB/s" in done.stderr and "sha256 matches" in done.stderr
    config = tomllib.loads((tmp_path / "config.toml").read_text())
    assert config["llm"]["model"] == str(path) and "DocDesk now uses" in done.stdout
    assert [r.method for r in hub.log if r.path.startswith("/api/models/")] == ["POST"]  # paths-info: size, sha256

    listed = docdesk(env, "models").stdout
    assert next(x for x in listed.splitlines() if " qwen3-4b " in x).startswith("*")


def test_two_downloads_of_one_model_at_once_share_one_lock_and_both_succeed(hub, env, tmp_path):
    hub.bytes_per_second = 20 << 20  # ~5 s each: the second starts while the first is writing
    command = [sys.executable, "-m", "app.cli.main", "models", "download", "qwen3-4b", "--no-use"]
    both = [
        subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    results = [child.communicate(timeout=120) for child in both]
    assert [child.returncode for child in both] == [0, 0], [err[-400:] for _, err in results]
    path = tmp_path / "models" / "Qwen--Qwen3-4B-GGUF" / "Qwen3-4B-Q4_K_M.gguf"
    assert sha256_of(path) == sha256_of(GGUF) and not path.with_name(path.name + ".incomplete").exists()
    served = sum(r.sent for r in hub.log if r.method == "GET" and r.path.endswith(".gguf"))
    assert served < 1.5 * SIZE  # one of them downloaded it; the other found it done


def test_a_disk_that_fills_during_a_download_exits_3_and_keeps_the_part(hub, env, tmpfs):  # noqa: F811
    from app.desk.model_download import DISK_MARGIN
    from tests.app.test_exit_codes import fill

    models = tmpfs("models", f"{(SIZE + DISK_MARGIN) // (1 << 20) + 16}m")  # room when it starts
    env = {**env, "DOCDESK_MODELS": str(models)}
    hub.bytes_per_second = 10 << 20  # ~10 s: the disk fills while it writes
    child = subprocess.Popen(
        [sys.executable, "-m", "app.cli.main", "models", "download", "qwen3-4b", "--no-use"],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    partial = models / "Qwen--Qwen3-4B-GGUF" / "Qwen3-4B-Q4_K_M.gguf.incomplete"
    deadline = time.monotonic() + 60
    while not (partial.exists() and partial.stat().st_size > 4 << 20):
        assert time.monotonic() < deadline and child.poll() is None, "the download never got going"
        time.sleep(0.1)
    fill(models, leave=0)  # another program takes the rest of the disk
    _, err = child.communicate(timeout=120)
    assert child.returncode == 3, err[-500:]  # the exit-code table: the disk is full
    assert "is full" in err and "Traceback" not in err
    assert partial.exists()  # the part downloaded is kept for when there is room


def test_use_a_gguf_file_i_have_reads_its_header_and_refuses_what_is_not_gguf(env, tmp_path):
    used = docdesk(env, "models", "use", str(GGUF), "--json")
    assert used.returncode == 0, used.stderr
    payload = json.loads(used.stdout)
    assert payload["verdict"]["kind"] == "cpu" and payload["header"]["shape"]["architecture"] == "llama"
    assert tomllib.loads((tmp_path / "config.toml").read_text())["llm"]["model"] == str(GGUF)
    fake = tmp_path / "notes.gguf"
    fake.write_text("not a model")
    refused = docdesk(env, "models", "use", str(fake))
    assert refused.returncode != 0 and "not a GGUF file" in refused.stderr
    assert docdesk(env, "models", "use", "qwen3-14b").returncode == 2  # not downloaded yet


def test_a_download_killed_with_kill_9_resumes_where_it_stopped(hub, env, tmp_path):
    hub.bytes_per_second = 10 << 20  # about 10 s for the whole file
    partial = tmp_path / "models" / "Qwen--Qwen3-4B-GGUF" / "Qwen3-4B-Q4_K_M.gguf.incomplete"
    first = subprocess.Popen(
        [sys.executable, "-m", "app.cli.main", "models", "download", "qwen3-4b"],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (partial.exists() and partial.stat().st_size > 20 << 20):
        assert time.monotonic() < deadline and first.poll() is None, "the download never got going"
        time.sleep(0.1)
    os.killpg(first.pid, signal.SIGKILL)  # the CLI and its download child, as a crash or kill -9 would
    first.wait()
    kept = partial.stat().st_size
    assert 20 << 20 < kept < SIZE

    hub.bytes_per_second = None
    second = docdesk(env, "models", "download", "qwen3-4b")
    assert second.returncode == 0, second.stderr
    ranges = [r.range for r in hub.requests_for("Qwen3-4B-Q4_K_M.gguf") if r.path.startswith("/cdn/")]
    resumed_at = int(ranges[-1].removeprefix("bytes=").split("-")[0])
    assert resumed_at >= kept - (1 << 20) and resumed_at > 0  # from where it stopped, not from 0
    sent = sum(r.sent for r in hub.requests_for("Qwen3-4B-Q4_K_M.gguf")[-1:])
    assert sent == SIZE - resumed_at
    final = partial.with_name("Qwen3-4B-Q4_K_M.gguf")
    assert sha256_of(final) == sha256_of(GGUF) and not partial.exists()


def test_a_file_whose_hash_differs_from_the_lfs_metadata_is_refused_and_removed(hub, env, tmp_path):
    entry = find("qwen2.5-3b")
    hub.add(entry.repo, entry.file, GGUF, sha256="0" * 64)  # the Hub's record says another file
    refused = docdesk(env, "models", "download", entry.name)
    assert refused.returncode == 2 and "does not match the Hub's sha256" in refused.stderr
    folder = tmp_path / "models" / entry.repo.replace("/", "--")
    assert list(folder.iterdir()) == []  # neither the file nor a partial one is left
    assert not (tmp_path / "config.toml").exists()  # and the model in use did not change


def test_a_file_larger_than_the_free_disk_is_refused_before_downloading(hub, env, tmp_path):
    entry = find("gemma-3-12b")
    hub.add(entry.repo, entry.file, GGUF, declared_size=10**15)  # a petabyte, says the metadata
    refused = docdesk(env, "models", "download", entry.name)
    assert refused.returncode == 3 and "GB free" in refused.stderr
    assert not hub.requests_for(entry.file)  # not one byte asked for
    assert not (tmp_path / "models" / entry.repo.replace("/", "--") / (entry.file + ".incomplete")).exists()


def test_an_unknown_name_lists_the_catalog(env):
    wrong = docdesk(env, "models", "download", "llama-9000")
    assert wrong.returncode == 2 and "qwen3-32b" in wrong.stderr

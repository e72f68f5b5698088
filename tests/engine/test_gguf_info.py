"""The GGUF header reader: metadata without the weights, and nothing left mapped afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.backends.llama_cpp import bundled_model_path
from engine.errors import ModelLoadError
from engine.models.gguf_info import read_gguf, read_metadata
from tests.native import run_child


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc")
def test_reading_the_header_leaves_the_file_unmapped_unlike_the_gguf_package():
    # A fresh process: in this one, other tests keep the bundled model loaded (mapped) by llama.cpp.
    code = """
        import gc, json
        from pathlib import Path
        from engine.backends.llama_cpp import bundled_model_path
        from engine.models.gguf_info import read_gguf
        path = bundled_model_path()
        mapped = lambda: str(path) in Path("/proc/self/maps").read_text()
        read_gguf(path)
        gc.collect()
        ours = mapped()
        from gguf import GGUFReader
        reader = GGUFReader(str(path))  # what DocDesk used before: a memmap of the whole file
        print(json.dumps({"ours": ours, "gguf_package": mapped()}))
    """
    result = run_child(code)
    assert not result.crash, result.describe()
    assert result.output == {"ours": False, "gguf_package": True}


def test_metadata_matches_the_gguf_packages_reading():
    from gguf import GGUFReader

    meta, size = read_metadata(bundled_model_path())
    reader = GGUFReader(str(bundled_model_path()))
    for key in (
        "general.architecture",
        "llama.block_count",
        "llama.attention.head_count_kv",
        "tokenizer.chat_template",
    ):
        assert meta[key] == reader.fields[key].contents()
    assert meta["tokenizer.ggml.tokens"] is None  # the vocabulary is skipped, not kept
    assert size == bundled_model_path().stat().st_size


def test_a_file_cut_anywhere_is_named_damaged(tmp_path):
    data = bundled_model_path().read_bytes()
    for cut in (6, 100, 1 << 20, len(data) - 1):
        broken = tmp_path / f"cut-{cut}.gguf"
        broken.write_bytes(data[:cut])
        with pytest.raises(ModelLoadError, match="damaged GGUF"):
            read_gguf(broken)


def test_the_block_table_is_ggmls():
    from gguf.constants import GGML_QUANT_SIZES

    from engine.models.gguf_info import GGML_BLOCKS

    assert {int(k): v for k, v in GGML_QUANT_SIZES.items()} == GGML_BLOCKS


# -- the same parser over HTTP range requests (a local stand-in for the Hub: tests/hub_server.py) --
@pytest.fixture
def hub():
    from tests.hub_server import FakeHub

    server = FakeHub()
    server.add("HuggingFaceTB/SmolLM2-GGUF", "SmolLM2-135M-Instruct.Q4_1.gguf", bundled_model_path())
    server.start()
    yield server
    server.stop()


def test_a_header_read_over_http_ranges_equals_the_files_and_fetches_only_its_start(hub):
    from engine.models.gguf_info import FileSource, HttpRangeSource, read_header

    url = f"{hub.endpoint}/HuggingFaceTB/SmolLM2-GGUF/resolve/main/SmolLM2-135M-Instruct.Q4_1.gguf"
    with HttpRangeSource(url) as remote:
        over_http = read_header(remote)
    with FileSource(bundled_model_path()) as local:
        on_disk = read_header(local)
    assert over_http == on_disk  # metadata, the file's size (from Content-Range) and every tensor
    assert over_http.size == bundled_model_path().stat().st_size
    assert len(over_http.tensors) == 272 and over_http.tensors[0].nbytes
    served = hub.requests_for("SmolLM2-135M-Instruct.Q4_1.gguf")
    cdn = [r for r in served if r.path.startswith("/cdn/")]
    assert cdn and all(r.range and r.range.startswith("bytes=") for r in served)  # never a whole file
    assert sum(r.sent for r in cdn) <= 4 << 20 < over_http.size  # a few MB of a 98 MB file
    assert remote.requests[0] == (0, (1 << 20) - 1)


def test_a_server_without_ranges_or_a_missing_file_is_named(hub, tmp_path):
    from engine.errors import ModelNotFound
    from engine.models.gguf_info import HttpRangeSource, read_header

    with pytest.raises(ModelNotFound, match="HTTP 404"):
        with HttpRangeSource(f"{hub.endpoint}/HuggingFaceTB/SmolLM2-GGUF/resolve/main/missing.gguf") as source:
            read_header(source)
    with pytest.raises(ModelNotFound, match="cannot reach"):
        with HttpRangeSource("http://127.0.0.1:9/none.gguf", timeout=2) as source:
            read_header(source)

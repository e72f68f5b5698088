"""Markers set from what a test uses, so `make test-fast` (-m "not models and not gpu and not gui
and not subprocess and not slow") runs what needs no model, GPU, window or child process.

- A fixture that loads a bundled model, drives the window or starts a child process is decorated
  `@marks("models")`, `@marks("subprocess")`, ... (under `@pytest.fixture`); every test that uses
  it, directly or through other fixtures, gets those markers. pytest-qt's `qtbot` and `qapp` mean
  `gui`.
- A test that starts a child itself (the CLI, `docdesk serve`, a server, a measuring child) is
  named in EXPLICIT below, or marked in its own module.
- In a run that leaves `models` or `subprocess` out, a test without the marker that loads a model
  or starts a child process fails and says which marker it needs (`unmarked_work_fails`): the
  fast loop cannot grow slow by accident, and nothing is marked by guesswork.
"""

from __future__ import annotations

import functools
import multiprocessing.process
import os
import re
import subprocess

import pytest

FIXTURE_MARKS = {"qtbot": ("gui",), "qapp": ("gui",)}  # pytest-qt's fixtures: a QApplication

# Tests that start a child process or load a model without a fixture saying so, by node id
# prefix (a module, or one test with all its parameters). Found by running the unmarked tests with
# unmarked_work_fails on; keep it in step with what it reports.
EXPLICIT: dict[str, tuple[str, ...]] = {
    "tests/app/test_install_script.py": ("subprocess",),  # runs packaging/install.sh
    "tests/app/test_library_follows.py::test_a_cli_add_shows_in_the_open_window": ("subprocess", "models"),
    "tests/app/test_models_cli.py": ("subprocess",),  # `docdesk models` as a child
    "tests/app/test_models_dialog.py::test_download_from_the_hub_then_the_window_uses_the_model": (
        "subprocess",  # the download child
        "models",  # then loads what it downloaded
    ),
    "tests/app/test_models_dialog.py::test_cancel_keeps_the_part_already_downloaded": ("subprocess",),
    "tests/app/test_models_dialog.py::test_the_menu_the_first_run_guide_and_settings_open_the_dialog": ("models",),
    "tests/app/test_ocr_beside_qt.py::test_the_window_toolkit_works_after_the_ocr_engine_loaded": ("subprocess",),
    "tests/app/test_qt_translations.py::test_restart_starts_docdesk_again_after_the_window_closed": ("subprocess",),
    "tests/app/test_rerank.py::test_llama_cpp_server_gives_the_judgement_from_its_log_probabilities": (
        "models",
        "subprocess",  # llama-server on the bundled model
    ),
    "tests/app/test_serve_load.py": ("subprocess",),  # `docdesk serve` in a child under 50 clients
    "tests/app/test_window_fit.py::test_the_real_window_fits_each_screen_first_and_restored": ("subprocess",),
    "tests/engine/test_backend_registry.py::test_looking_up_every_backend_imports_nothing_heavy": ("subprocess",),
    "tests/engine/test_gguf_info.py::test_reading_the_header_leaves_the_file_unmapped_unlike_the_gguf_package": (
        "subprocess",
    ),
    "tests/ingest/test_declared_work.py::test_a_100_megapixel_rgba_png_is_decoded_reduced_in_bounded_memory": (
        "subprocess",
    ),
    "tests/ingest/test_hostile_readers.py::test_docx_whose_document_xml_is_hundreds_of_mb_of_zeros": ("subprocess",),
    "tests/ingest/test_hostile_readers.py::test_docx_bomb_that_declares_small_sizes_is_stopped_while": ("subprocess",),
    "tests/ingest/test_hostile_readers.py::test_docx_picture_parts_are_never_decompressed": ("subprocess",),
    "tests/ingest/test_office_formats.py::test_xlsx_whose_sheet_is_hundreds_of_mb_of_zeros": ("subprocess",),
    "tests/ingest/test_reader_contracts.py::test_reader_modules_are_imported_only_when_a_file_of_their": (
        "subprocess",
    ),
    "tests/ingest/test_text_stream.py::test_a_large_text_file_is_read_in_a_small_multiple_of_its_size": ("subprocess",),
    "tests/reliability/test_reliability.py": ("subprocess",),  # each attack runs the real CLI
    "tests/test_corpus_data.py::test_the_script_makes_exactly_the_committed_files": ("subprocess",),
    "tests/test_packaging.py": ("subprocess",),  # pip builds the wheel
    "tests/app/test_window_xvfb.py": ("gui", "subprocess"),  # the window under xvfb-run, where installed
    # `models` modules whose subject runs as a child: the CLI, a model server, llama.cpp on its own.
    "tests/app/test_cli.py": ("subprocess",),
    "tests/app/test_exit_codes.py": ("subprocess",),
    "tests/app/test_mcp_server.py": ("subprocess",),
    "tests/app/test_crash_report.py": ("subprocess",),
    "tests/app/test_answer_modes_llama_server.py": ("subprocess",),
    "tests/ingest/test_crash.py": ("subprocess",),
    "tests/ingest/test_concurrent_reads.py": ("subprocess",),  # the check under each Python found
    "tests/ingest/test_encode_distinct.py::test_a_repeated_ods_row_is_embedded_once_per_distinct_passage": (
        "subprocess",  # the reader child
    ),
    "tests/app/test_embedder_owner.py": ("subprocess",),  # adds: the reader child
    "tests/engine/test_template_limits.py::test_a_model_with_a_broken_template_loads_and_answers_with_its_familys": (
        "models",
    ),
    "tests/engine/test_template_limits.py::test_models_use_warns_about_a_broken_template_and_refuses_one_it_cannot_replace": (
        "subprocess",
    ),
    "tests/engine/test_gguf_hostile.py::test_ctrl_c_ends_docdesk_models_at_once_while_the_hub_trickles": (
        "subprocess",
    ),
    "tests/ingest/test_sync_guard.py": ("subprocess",),
    "tests/engine/test_servers.py": ("subprocess",),
    "tests/engine/test_llama_server.py": ("subprocess",),
    "tests/engine/test_native_completion.py": ("subprocess",),
    "tests/engine/test_thinking_llama_server.py": ("subprocess",),
    "tests/engine/test_gpu.py": ("subprocess",),
    "tests/engine/test_vllm_gpu.py": ("subprocess",),
}

# Children that cost milliseconds and start no Python: not what `subprocess` is about (nvidia-smi
# and ldconfig answer the GPU and library checks on machines that have them; `nvcc --version`
# the Makefile's toolchain check, packaging/cuda_toolchain.py).
CHEAP_TOOLS = frozenset({"git", "make", "uname", "nvidia-smi", "ldconfig", "nvcc"})
GUARDED = ("models", "subprocess")


def marks(*names: str):
    """Decorate a fixture's function (under @pytest.fixture): its users get these markers."""

    def decorate(function):
        function.docdesk_marks = (*getattr(function, "docdesk_marks", ()), *names)
        return function

    return decorate


def _fixture_marks(item) -> set[str]:
    info = getattr(item, "_fixtureinfo", None)
    found: set[str] = set()
    for name in getattr(item, "fixturenames", ()):
        found.update(FIXTURE_MARKS.get(name, ()))
        for definition in info.name2fixturedefs.get(name, ()) if info is not None else ():
            found.update(getattr(definition.func, "docdesk_marks", ()))
    return found


def _explicit_marks(nodeid: str) -> set[str]:
    return {m for prefix, names in EXPLICIT.items() if nodeid.startswith(prefix) for m in names}


def pytest_collection_modifyitems(config, items):
    for item in items:
        have = {m.name for m in item.iter_markers()}
        for name in sorted((_fixture_marks(item) | _explicit_marks(item.nodeid)) - have):
            item.add_marker(name)


def left_out(config) -> set[str]:
    """The guarded markers this run's -m expression leaves out ("not models", ...)."""
    expression = config.getoption("markexpr", default="") or ""
    return {name for name in GUARDED if re.search(rf"\bnot\s+{name}\b", expression)}


def _is_cheap(args) -> bool:
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    program = os.fsdecode(argv[0]).split()[0] if argv else ""
    return os.path.basename(program) in CHEAP_TOOLS


def _forbid_children(monkeypatch, found: list[str]) -> None:
    execute = subprocess.Popen._execute_child

    def execute_child(self, args, *rest, **options):
        if not _is_cheap(args):
            shown = args if isinstance(args, (str, bytes)) else " ".join(map(os.fsdecode, args))
            found.append(f"starts a child process ({str(shown)[:100]}): mark it `subprocess`")
            raise RuntimeError("a child process in a test not marked `subprocess` (tests/markers.py)")
        return execute(self, args, *rest, **options)

    def start_process(self):
        found.append(f"starts a child process ({getattr(self, '_target', None)!r}): mark it `subprocess`")
        raise RuntimeError("a child process in a test not marked `subprocess` (tests/markers.py)")

    monkeypatch.setattr(subprocess.Popen, "_execute_child", execute_child)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", start_process)


def _refusing_load(what: str, found: list[str]):
    def load(*args, **kwargs):
        found.append(f"loads {what}: mark it `models`, or give it tests/standin_embedder.py")
        raise RuntimeError(f"{what} loaded in a test not marked `models` (tests/markers.py)")

    return load


def _forbid_models(monkeypatch, found: list[str]) -> None:
    from engine.backends.llama_cpp import LlamaCppBackend
    from ingest.embedders.multilingual import E5Embedder, USEEmbedder
    from ingest.embedders.sentence_transformer import SentenceTransformerEmbedder

    for model_class in (SentenceTransformerEmbedder, USEEmbedder, E5Embedder):
        refusing = functools.cached_property(_refusing_load(f"the embedding model of {model_class.__name__}", found))
        refusing.__set_name__(model_class, "model")
        monkeypatch.setattr(model_class, "model", refusing)
    # _load is where every use of the model (warm_up, a reply, counting tokens) opens the GGUF.
    monkeypatch.setattr(LlamaCppBackend, "_load", _refusing_load("a GGUF model (llama.cpp)", found))


@pytest.fixture(autouse=True)
def unmarked_work_fails(request, monkeypatch):
    """In a run that leaves out `models` or `subprocess`, a test without that marker that loads a
    model or starts a child (its own thread's or a worker's) fails, naming the marker it needs."""
    guarded = {name for name in left_out(request.config) if request.node.get_closest_marker(name) is None}
    found: list[str] = []
    if "subprocess" in guarded:
        _forbid_children(monkeypatch, found)
    if "models" in guarded:
        _forbid_models(monkeypatch, found)
    yield
    if found:
        pytest.fail("this test " + "; ".join(dict.fromkeys(found)) + " (tests/markers.py)", pytrace=False)

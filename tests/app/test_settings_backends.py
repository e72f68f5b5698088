"""The Settings dialog's Model tab is built from the backend table: each line shows only its
backend's fields, a configuration opens on its own line and is saved back unchanged, and the
labels are translated."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import dataclasses  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("pytestqt")

from app.desk.settings import Settings  # noqa: E402
from app.gui.settings_dialog import SettingsDialog  # noqa: E402
from engine.backends import LlmSettings, registry  # noqa: E402

CONFIGS = {  # a config.toml [llm] for each line, every field away from its default
    "bundled": LlmSettings(context=4096, threads=3),
    "gguf": LlmSettings(
        model="/models/q.gguf",
        context=2048,
        gpu_layers=20,
        threads=2,
        batch=256,
        flash_attention=False,
        kv_cache="q8_0",
        mlock=True,
        cpu_repack=True,
    ),  # fmt: skip
    "llama_server": LlmSettings(
        backend="llama_server",
        model="/models/q.gguf",
        llama_server="/opt/llama-server",
        slots=4,
        server_port=8088,
        context=8192,
        gpu_layers=0,
        flash_attention=True,
        kv_cache="f16",
    ),  # fmt: skip
    "vllm": LlmSettings(backend="vllm", model="Qwen/Qwen2.5-7B", context=16384, vllm={"max_num_seqs": 8}),
    "openai": LlmSettings(
        backend="openai",
        url="http://gpu-box:8000",
        model="served",
        api_key="k",
        context=32768,
        max_concurrency=8,
        connect_timeout=2.5,
        read_timeout=300.0,
    ),  # fmt: skip
}


def open_dialog(qtbot, tmp_path, llm: LlmSettings) -> SettingsDialog:
    settings = Settings(library=tmp_path / "library")
    settings.llm = llm
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def visible(dialog) -> dict[str, list[str]]:
    return {key: [n for n, w in widgets.items() if w.isVisible()] for key, widgets in dialog.fields.items()}


@pytest.mark.parametrize("key", list(CONFIGS))
def test_a_configuration_opens_on_its_line_with_only_its_fields_and_saves_back_unchanged(qtbot, tmp_path, key):
    dialog = open_dialog(qtbot, tmp_path, dataclasses.replace(CONFIGS[key]))
    assert dialog.backend.currentData() == key
    choice = dict((c.key, c) for _, c in registry.offered())[key]
    assert visible(dialog) == {k: ([o.name for o in choice.options] if k == key else []) for k in dialog.fields}
    assert dialog.collect().llm == CONFIGS[key]


def test_the_list_is_the_table_and_switching_lines_switches_fields(qtbot, tmp_path):
    dialog = open_dialog(qtbot, tmp_path, LlmSettings())
    lines = [dialog.backend.itemData(i) for i in range(dialog.backend.count())]
    assert lines == [c.key for _, c in registry.offered()] == ["bundled", "gguf", "llama_server", "vllm", "openai"]
    assert visible(dialog)["bundled"] == ["context", "threads"]  # no server URL, vLLM or GPU fields
    for key in ("openai", "vllm", "gguf"):
        dialog.backend.setCurrentIndex(dialog.backend.findData(key))
        assert [k for k, names in visible(dialog).items() if names] == [key]
    assert "url" in dialog.fields["openai"] and dialog.field("url") is None


def test_saving_one_backend_keeps_the_other_backends_settings(qtbot, tmp_path):
    dialog = open_dialog(qtbot, tmp_path, dataclasses.replace(CONFIGS["openai"]))
    dialog.backend.setCurrentIndex(dialog.backend.findData("gguf"))
    dialog.field("model").setText("/models/other.gguf")
    dialog.field("kv_cache").setCurrentIndex(dialog.field("kv_cache").findData("q8_0"))
    llm = dialog.collect().llm
    assert (llm.backend, llm.model, llm.kv_cache) == ("llama_cpp", "/models/other.gguf", "q8_0")
    assert (llm.url, llm.api_key, llm.read_timeout) == ("http://gpu-box:8000", "k", 300.0)


def test_the_bundled_line_means_no_model_file_and_an_empty_gguf_line_falls_back_to_it(qtbot, tmp_path):
    dialog = open_dialog(qtbot, tmp_path, dataclasses.replace(CONFIGS["gguf"]))
    dialog.backend.setCurrentIndex(dialog.backend.findData("bundled"))
    assert dialog.collect().llm.model is None
    dialog.backend.setCurrentIndex(dialog.backend.findData("gguf"))
    dialog.field("model").setText("  ")
    llm = dialog.collect().llm
    assert (llm.backend, llm.model) == ("llama_cpp", None)
    assert registry.choice_for(llm) == "bundled"


def test_the_backend_labels_are_translated(qapp, qtbot, tmp_path):
    from PySide6.QtCore import QTranslator

    from app.gui.app import I18N

    translator = QTranslator()
    assert translator.load(str(I18N / "docdesk_zh_CN.qm"))
    qapp.installTranslator(translator)
    try:
        dialog = open_dialog(qtbot, tmp_path, dataclasses.replace(CONFIGS["openai"]))
        assert dialog.backend.currentText() == "OpenAI 兼容服务器"
        assert dialog.backend.itemText(0) == "自带模型（SmolLM2-135M，CPU）"
        assert dialog.field("api_key").toolTip() == "作为 Bearer 令牌发送；留空：不发送"
    finally:
        qapp.removeTranslator(translator)

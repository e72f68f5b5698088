"""A backend defined in one module (tests/engine/toy_backend.py) and registered through the
registry's public call shows up everywhere the backend table is read: the command line's
--backend, the Settings dialog (with only its own fields), the packaged app's hidden imports.
It is unregistered afterwards, so no other test sees it."""

from __future__ import annotations

import ast
import importlib
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from app.cli.parser import build_parser  # noqa: E402
from app.desk.settings import Settings  # noqa: E402
from engine.backends import ChatRequest, LlmSettings, create_backend, registry  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

TOY = "tests.engine.toy_backend"


@pytest.fixture
def toy():
    assert "toy" not in registry.table()
    module = importlib.import_module(TOY)
    try:
        yield module
    finally:
        registry.unregister_backend("toy")
        sys.modules.pop(TOY, None)
    assert "toy" not in registry.table() and "toy" not in registry.listed_names()


def spec_hidden_imports() -> list[str]:
    """What packaging/docdesk.spec's table_modules(TABLES) gives, run without PyInstaller."""
    tree = ast.parse((ROOT / "packaging" / "docdesk.spec").read_text(encoding="utf-8"))
    wanted = [
        node
        for node in tree.body
        if (isinstance(node, ast.FunctionDef) and node.name == "table_modules")
        or (isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "TABLES" for t in node.targets))
    ]
    assert len(wanted) == 2, "the spec names its tables in TABLES and reads them with table_modules()"
    namespace: dict = {"importlib": importlib}
    exec(compile(ast.Module(wanted, type_ignores=[]), "docdesk.spec", "exec"), namespace)
    return namespace["table_modules"](namespace["TABLES"])


def test_the_toy_is_built_from_its_own_module(toy):
    assert "toy" in registry.listed_names() and registry.table()["toy"].module == TOY
    backend = create_backend(LlmSettings(backend="toy", url="http://toy:9", max_concurrency=3))
    assert (backend.name, backend.max_concurrency) == ("toy", 3)
    request = ChatRequest([{"role": "user", "content": "hi"}], max_tokens=64)
    assert "".join(backend.stream_chat(request)) == "toy at http://toy:9"
    assert registry.options("toy") == registry.table()["toy"].choices[0].options


def test_the_command_line_offers_the_toy_while_it_is_registered(toy, capsys):
    assert build_parser().parse_args(["ask", "--backend", "toy", "why?"]).backend == "toy"
    registry.unregister_backend("toy")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["ask", "--backend", "toy", "why?"])
    assert "invalid choice: 'toy'" in capsys.readouterr().err


def test_the_packaged_app_imports_the_toy_and_every_built_in_backend(toy):
    found = spec_hidden_imports()
    assert TOY in found
    for entry in registry.BUILT_IN.values():
        assert entry.module in found
    assert "engine.backends.llama_server" in found


def shown(dialog) -> dict[str, list[str]]:
    """Choice key -> the names of its fields the user can see now."""
    return {key: [n for n, w in widgets.items() if w.isVisible()] for key, widgets in dialog.fields.items()}


def test_the_settings_dialog_lists_the_toy_with_only_its_fields(toy, qtbot, tmp_path):
    pytest.importorskip("pytestqt")
    from app.gui.settings_dialog import SettingsDialog

    settings = Settings(library=tmp_path / "library")
    settings.llm.backend, settings.llm.url = "toy", "http://toy:1"
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.backend.currentData() == "toy" and dialog.backend.currentText() == "Toy backend (tests)"
    assert [k for k, names in shown(dialog).items() if names] == ["toy"]
    assert shown(dialog)["toy"] == ["url", "max_concurrency"]
    assert dialog.field("url").text() == "http://toy:1" and dialog.field("gpu_layers") is None

    dialog.field("url").setText("http://toy:2")
    dialog.field("max_concurrency").setValue(5)
    llm = dialog.collect().llm
    assert (llm.backend, llm.url, llm.max_concurrency) == ("toy", "http://toy:2", 5)

    dialog.backend.setCurrentIndex(dialog.backend.findData("gguf"))  # another backend: its own fields
    assert not shown(dialog)["toy"] and "gpu_layers" in shown(dialog)["gguf"]
    assert dialog.collect().llm.backend == "llama_cpp"
    dialog.backend.setCurrentIndex(dialog.backend.findData("toy"))
    assert shown(dialog)["toy"] == ["url", "max_concurrency"] and dialog.field("url").text() == "http://toy:2"

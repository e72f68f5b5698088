"""A toy format (tests/ingest/toy_reader.py) and a toy backend (tests/engine/toy_backend.py), each
added by one module, show everywhere DocDesk lists formats and backends: the command line, the
Settings dialog, the chat hint, the MCP instructions and the packaged app's hidden imports.
Both are unregistered afterwards."""

from __future__ import annotations

import importlib
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from app.cli.parser import build_parser  # noqa: E402
from app.desk.settings import Settings  # noqa: E402
from engine.backends import registry as backends  # noqa: E402
from ingest.readers.registry import unregister_format  # noqa: E402
from tests.app.test_toy_backend import spec_hidden_imports  # noqa: E402

FORMAT_MODULE, BACKEND_MODULE = "tests.ingest.toy_reader", "tests.engine.toy_backend"


@pytest.fixture
def toys():
    for module in (FORMAT_MODULE, BACKEND_MODULE):
        sys.modules.pop(module, None)
        importlib.import_module(module)
    try:
        yield
    finally:
        unregister_format("toy")
        backends.unregister_backend("toy")
        for module in (FORMAT_MODULE, BACKEND_MODULE):
            sys.modules.pop(module, None)


def test_the_command_line_lists_both(toys):
    parser = build_parser()
    add = parser._subparsers._group_actions[0].choices["add"]
    assert "Toy notes" in add.format_help()
    assert parser.parse_args(["ask", "--backend", "toy", "why?"]).backend == "toy"


def test_the_mcp_instructions_list_the_format(toys):
    from app.mcp.server import instructions

    assert "Toy notes" in instructions()


def test_the_packaged_app_imports_both_modules(toys):
    found = spec_hidden_imports()
    assert FORMAT_MODULE in found and BACKEND_MODULE in found
    assert "ingest.readers.pdf" in found and "engine.backends.llama_server" in found


def test_the_window_lists_both(toys, qtbot, tmp_path):
    from PySide6.QtWidgets import QLabel

    from app.gui.chat_pane import ChatPane
    from app.gui.settings_dialog import SettingsDialog

    pane = ChatPane()
    qtbot.addWidget(pane)
    assert "Toy notes" in pane.transcript.toPlainText()  # the first-run hint

    dialog = SettingsDialog(Settings(library=tmp_path / "library"))
    qtbot.addWidget(dialog)
    assert any("Toy notes" in label.text() for label in dialog.findChildren(QLabel))
    assert dialog.backend.findData("toy") >= 0


def test_once_unregistered_they_are_gone(toys, qtbot):
    from app.gui.chat_pane import ChatPane

    unregister_format("toy")
    backends.unregister_backend("toy")
    pane = ChatPane()
    qtbot.addWidget(pane)
    assert "Toy notes" not in pane.transcript.toPlainText()
    assert "toy" not in backends.listed_names()

"""The size targets hold: no module in app/, engine/, ingest/ over 400 lines, no function over 60."""

from __future__ import annotations

import importlib.util

from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("check_structure", ROOT / "packaging" / "check_structure.py")
check_structure = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_structure)


def test_no_module_is_over_400_lines():
    assert check_structure.long_modules(400) == []


def test_no_function_is_over_60_lines():
    assert check_structure.long_functions(60) == []

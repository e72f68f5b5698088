"""The reliability suite runs its small attacks by default; the full-size ones (marked `slow`)
only when asked: `pytest tests/reliability --run-slow`, `DOCDESK_SLOW=1`, or `-m slow`."""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="also run the full-size reliability attacks")


def _slow_wanted(config) -> bool:
    expression = config.getoption("-m") or ""
    asked = "slow" in expression.replace("not slow", "")
    return config.getoption("--run-slow", default=False) or os.environ.get("DOCDESK_SLOW") == "1" or asked


def pytest_collection_modifyitems(config, items):
    if _slow_wanted(config):
        return
    skip = pytest.mark.skip(reason="a full-size attack: run with --run-slow, DOCDESK_SLOW=1 or -m slow")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)

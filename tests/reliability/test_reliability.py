"""The reliability attacks as tests: each runs the real `docdesk` CLI against a hostile input and
asserts the expected behaviour (exit code, reason, the library afterwards, memory where it
matters). The small forms run by default; the full-size ones are marked `slow` (see conftest.py).
`python tests/reliability/run_attacks.py` runs the same attacks and writes the table."""

from __future__ import annotations

import pytest

from tests.reliability.attacks import selected
from tests.reliability.harness import Attack, Shared, run_attack


def _param(item: Attack):
    marks = [pytest.mark.slow] if item.slow else []
    if item.models:
        marks.append(pytest.mark.models)
    return pytest.param(item, id=item.name, marks=marks)


@pytest.fixture(scope="session")
def shared(tmp_path_factory) -> Shared:
    """The template library and the stand-in model, built once for every attack of the session."""
    return Shared(tmp_path_factory.mktemp("reliability-shared"))


@pytest.mark.parametrize("item", [_param(a) for a in selected()])
def test_attack(item: Attack, shared: Shared, tmp_path) -> None:
    row = run_attack(item, tmp_path, shared)
    if row.result == "skipped":
        pytest.skip(row.observation)
    assert row.passed, f"{item.name}: expected {item.expected}; got: {row.observation}"

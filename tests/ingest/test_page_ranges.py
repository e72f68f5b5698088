"""Page numbers in warnings and reasons, as people write them."""

from __future__ import annotations

from ingest.readers.page_ranges import page_ranges


def test_runs_of_pages_are_written_as_ranges():
    assert page_ranges([4]) == "p. 4"
    assert page_ranges([1, 2, 3, 7]) == "pp. 1-3, 7"
    assert page_ranges([2, 5, 6, 9, 10, 11]) == "pp. 2, 5-6, 9-11"

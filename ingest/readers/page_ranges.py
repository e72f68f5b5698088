"""Page numbers as people write them in warnings and reasons: [1, 2, 3, 7] -> 'pp. 1-3, 7'."""

from __future__ import annotations


def page_ranges(numbers: list[int]) -> str:
    """Sorted page numbers as runs: [1, 2, 3, 7] -> 'pp. 1-3, 7'; [4] -> 'p. 4'."""
    parts: list[str] = []
    start = prev = numbers[0]
    for n in numbers[1:] + [0]:
        if n == prev + 1:
            prev = n
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = n
    return ("p. " if len(numbers) == 1 else "pp. ") + ", ".join(parts)

"""Token bytes to text: characters split across tokens, stop strings split across tokens."""

from __future__ import annotations

from engine.backends.stops import StopScanner


def feed_all(scanner: StopScanner, pieces: list[bytes]) -> str:
    return "".join(scanner.feed(p) for p in pieces) + scanner.flush()


def test_a_character_split_across_tokens_comes_out_whole():
    data = "驱动版本".encode()
    pieces = [data[i : i + 1] for i in range(len(data))]  # one byte per token
    scanner = StopScanner([])
    shown = [scanner.feed(p) for p in pieces]
    assert "".join(shown) == "驱动版本" and "\ufffd" not in "".join(shown)
    assert shown[:2] == ["", ""]  # nothing until the first character is complete


def test_a_stop_string_split_across_tokens_is_cut_and_never_shown():
    scanner = StopScanner(["<|im_end|>", "\nUser:"])
    assert feed_all(scanner, [b"Paris is the", b" capital.<|im", b"_en", b"d|> trailing"]) == "Paris is the capital."
    assert scanner.stopped


def test_a_held_back_prefix_that_is_no_stop_is_shown_later():
    scanner = StopScanner(["\nUser:"])
    assert scanner.feed(b"line one\nUs") == "line one"
    assert scanner.feed(b"ually fine") == "\nUsually fine"
    assert not scanner.stopped


def test_a_stream_cut_inside_a_character_drops_its_bytes():
    scanner = StopScanner([])
    assert scanner.feed("春天".encode() + "好".encode()[:2]) == "春天"
    assert scanner.flush() == ""

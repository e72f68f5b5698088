"""A format added in one module (tests/ingest/toy_reader.py, through the public registration call)
is sniffed, read, listed to users and handed to the packaging like the built-in ones, passes the
reader contract, and is gone again once unregistered."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from ingest.errors import UnsupportedFormat
from ingest.reader_process import Finished, Pages, read_stream
from ingest.readers import (
    Format,
    open_document,
    read_document,
    reader_modules,
    register_reader,
    supported_extensions,
    supported_formats,
    supported_formats_text,
    unregister_format,
)
from ingest.readers.registry import magic
from ingest.readers.sniff import CLAIMED, detect_format, is_supported_name
from tests.contracts.reader_contract import ReaderContract

MODULE = "tests.ingest.toy_reader"


@pytest.fixture
def toy():
    """The toy module imported (which registers it), then unregistered whatever the test did."""
    sys.modules.pop(MODULE, None)
    module = importlib.import_module(MODULE)
    yield module
    unregister_format("toy")
    sys.modules.pop(MODULE, None)


def test_a_toy_format_is_detected_read_and_listed(toy, tmp_path):
    path = toy.write_toy(
        tmp_path / "ferry.toy", "Ferry notes\nThe first crossing is at six.", "Fares stay as they are."
    )
    data = path.read_bytes()
    assert detect_format(path, data) == "toy" and detect_format(tmp_path / "unnamed", data) == "toy"
    stream = open_document(path)
    assert stream.format == "toy" and not stream.synthetic_pages
    result = read_document(path)
    assert [(p.number, p.text) for p in result.pages] == [
        (1, "Ferry notes\nThe first crossing is at six."),
        (2, "Fares stay as they are."),
    ]
    assert result.title == "Ferry notes"
    assert supported_formats()[-1] == "Toy notes"
    assert supported_formats_text().endswith("text, images and Toy notes")
    assert ".toy" in supported_extensions() and CLAIMED[".toy"] == "toy" and ".toy" in list(CLAIMED)
    assert is_supported_name(Path("notes.toy"))
    assert MODULE in reader_modules()


def test_a_toy_file_goes_through_the_reader_process_path(toy, tmp_path):
    path = toy.write_toy(tmp_path / "tides.toy", "Tide table", "High water at noon.")
    messages = []
    read_stream(1, str(path), None, messages.append)
    pages = [page for message in messages if isinstance(message, Pages) for page in message.pages]
    finished = messages[-1]
    assert isinstance(finished, Finished) and not finished.error, finished
    assert finished.format == "toy" and finished.title == "Tide table" and len(pages) == 2


def test_a_name_that_lies_is_refused_in_the_tables_words(toy, tmp_path):
    path = tmp_path / "notes.toy"
    path.write_text("no header here", encoding="utf-8")
    with pytest.raises(UnsupportedFormat, match=r"named \.toy but not a toy note \(no TOYDOC header\)"):
        detect_format(path, path.read_bytes())


def test_once_unregistered_the_toy_is_gone(toy, tmp_path):
    path = toy.write_toy(tmp_path / "gone.toy", "Gone", "soon")
    unregister_format("toy")
    assert "Toy notes" not in supported_formats() and ".toy" not in supported_extensions()
    assert MODULE not in reader_modules() and not is_supported_name(path)
    with pytest.raises(UnsupportedFormat, match=r"unsupported file type \.toy: DocDesk reads PDF, Word, "):
        detect_format(path, path.read_bytes())
    assert (
        supported_formats_text()
        == "PDF, Word, PowerPoint, Excel, EPUB, OpenDocument, HTML, Markdown, CSV, text and images"
    )


def test_the_table_refuses_what_would_make_it_ambiguous(toy):
    def reader(request):
        raise AssertionError("never called")

    with pytest.raises(ValueError, match=r"claims \.md, which is 'markdown'"):
        register_reader(Format("notes", "Notes", (".md",), sniff=magic(b"NOTES")))(reader)
    with pytest.raises(ValueError, match="is not in the table"):
        register_reader("nothing-of-that-name")(reader)
    with pytest.raises(ValueError, match="is read by tests.ingest.toy_reader already"):
        register_reader("toy")(reader)
    with pytest.raises(ValueError, match="is built in"):
        unregister_format("pdf")


class TestToyReader(ReaderContract):
    """The toy passes the contract every built-in reader passes."""

    format = "toy"
    expected = {"harbour.toy": "Dredging ended in March."}
    no_limit = "a toy: its files are a few lines"

    @pytest.fixture(autouse=True)
    def _registered(self, toy, tmp_path):
        self.toy = toy
        self.folder = tmp_path / "toys"
        self.folder.mkdir()
        toy.write_toy(self.folder / "harbour.toy", "Harbour", "Dredging ended in March.", "Moorings checked.")
        toy.write_toy(self.folder / "short.toy", "Short note")

    def files(self):
        return sorted(self.folder.glob("*.toy"))

    def damaged(self, tmp_path):
        path = tmp_path / "damaged.toy"
        path.write_bytes(self.toy.HEADER + b"\xff\xfe not UTF-8")
        return path

"""The contract every document reader passes (docs/ARCHITECTURE.md §3, §8), Haystack-style: a test
module subclasses ReaderContract for one format of the table (ingest/readers/registry.py), names
the class Test..., and supplies

- `format`: the table's name for it ("pdf", "docx", ...);
- `files()`: real files of that format (tests/data, assets/samples), small ones;
- `expected`: file name -> a phrase its text holds;
- `damaged(tmp_path)`: a damaged file of the format (the reader must say so as a DocDesk error);
- `multi_page(tmp_path)`: a file of several pages, for cancelling between them (default: the file of
  `files()` with the most pages);

and for the limits the reader enforces (at least one, or `no_limit` saying why there is none):

- `oversized(tmp_path)`: a file past an input limit (a zip bomb, a pixel bomb), refused fast;
- `text_limit` = (module, constant): the limit on the text read, which the contract lowers, and
  `big_file()`, whose text is far past the lowered one; `overshoot`: how far past it the reader
  may go (it stops at a row, page, chapter or 1 MB piece end);
- `check_other_limits(tmp_path, monkeypatch)`: any other bound, asserted there.

`work(monkeypatch)` may return a counter of the reader's own work (pages extracted, frames
recognised, slices decoded): cancelling after the first page must leave most of it undone.
`ocr`: read with OCR on (then `fake_ocr` stands in for the models unless a test is marked
`models`). Everything else is read for real, through `open_document` as the reader process does.
"""

from __future__ import annotations

import importlib
import math
import time
import zipfile
from collections.abc import Callable
from itertools import islice
from pathlib import Path

import pytest

from ingest.errors import IngestError, OversizedDocument
from ingest.readers import DocumentStream, finish_result, open_document, reader_modules, supported_formats
from ingest.readers.registry import WholeDocument, format_named, reader_for
from ingest.readers.sniff import detect_format
from ingest.records import ReadResult, page_label

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
PDF_SAMPLES = DATA / "corpus" / "pdf-samples"
SAMPLES = ROOT / "assets" / "samples"

LOWERED_LIMIT = 20_000  # characters: what a text limit is lowered to
REFUSE_SECONDS = 5.0  # an oversized input is refused within this, before it is expanded
CUTS = (0.1, 0.5, 0.9)  # a file cut at these fractions of its bytes


def fake_ocr(image):
    """Stands in for the OCR models: says how big the image it was given is."""
    from ingest.ocr import OcrPage

    width, height = image.size
    return OcrPage(f"Recognised words of a {width} x {height} image.", confidence=0.9, pixels=(width, height))


def zip_with(source: Path, target: Path, replaced: dict[str, bytes]) -> Path:
    """A copy of the ZIP `source` with the members `replaced` replaced or added."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            if info.filename not in replaced:
                new.writestr(info, old.read(info.filename))
        for name, data in replaced.items():
            new.writestr(name, data)
    return target


def zip_bomb(source: Path, target: Path) -> Path:
    """A copy of the ZIP `source` with one more XML part that declares 300 MB (zeros that deflate
    to 300 KB), built without ever holding it."""
    from tests.ingest.test_hostile_readers import deflated, repeated, write_zip

    with zipfile.ZipFile(source) as old:
        members = [deflated(info.filename, old.read(info.filename)) for info in old.infolist() if not info.is_dir()]
    members.append(repeated("bomb.xml", b"<x>", bytes(1 << 20), 300))
    return write_zip(target, members)


class ReaderContract:
    format: str = ""
    expected: dict[str, str] = {}
    ocr = False
    text_limit: tuple[str, str] | None = None
    overshoot = 3_000
    no_limit = ""

    # -- what a subclass supplies ---------------------------------------------------------
    def files(self) -> list[Path]:
        raise NotImplementedError("a ReaderContract subclass names its real test files")

    def damaged(self, tmp_path: Path) -> Path:
        raise NotImplementedError

    def multi_page(self, tmp_path: Path) -> Path:
        return max(self.files(), key=lambda path: len(self.read(path).pages))

    def oversized(self, tmp_path: Path) -> Path | None:
        return None

    def big_file(self) -> Path:
        raise NotImplementedError

    def check_other_limits(self, tmp_path: Path, monkeypatch) -> int:
        """Assert other bounds the reader keeps; return how many were checked."""
        return 0

    def work(self, monkeypatch) -> Callable[[], int] | None:
        return None

    # -- reading, as the reader process does ------------------------------------------------
    @pytest.fixture(autouse=True)
    def _no_models(self, request, monkeypatch):
        """OCR formats are read with fake_ocr unless the test is marked `models`."""
        if self.ocr and request.node.get_closest_marker("models") is None:
            # The reader module first: imported while ingest.ocr is patched, it would keep the fake
            # it imported by name for good, and a later `models` test would read fake text.
            module = importlib.import_module(format_named(self.format).module)
            monkeypatch.setattr("ingest.ocr.ocr_image", fake_ocr)
            if hasattr(module, "ocr_image"):  # imported by name at the module's top
                monkeypatch.setattr(module, "ocr_image", fake_ocr)

    def open(self, path: Path) -> DocumentStream:
        return open_document(path, data=path.read_bytes(), ocr=self.ocr)

    def read(self, path: Path) -> ReadResult:
        stream = self.open(path)
        return finish_result(stream, list(stream.pages()), path)

    def _reads_or_refuses(self, path: Path) -> None:
        """Reading `path` gives pages or a DocDesk error, never a library's own exception."""
        try:
            result = self.read(path)
        except IngestError as exc:
            assert str(exc).strip(), f"{type(exc).__name__} without a reason"
            return
        assert result.pages

    # -- the table ----------------------------------------------------------------------------
    def test_is_one_line_of_the_table_and_registers_its_reader(self):
        declared = format_named(self.format)
        assert declared.module in reader_modules() and declared.label in supported_formats()
        assert declared.extensions and all(e.startswith(".") and e == e.lower() for e in declared.extensions)
        reader = reader_for(self.format)
        assert reader.__module__ == declared.module
        assert all(path.suffix.lower() in declared.extensions for path in self.files())

    def test_its_files_are_known_by_their_content(self, tmp_path):
        declared = format_named(self.format)
        for path in self.files():
            data = path.read_bytes()
            assert detect_format(path, data) == self.format, path.name
            if declared.sniff is not None:  # a sniffed format needs no extension
                assert detect_format(tmp_path / "unnamed", data) == self.format, path.name

    # -- pages ----------------------------------------------------------------------------------
    def test_pages_come_numbered_with_their_labels(self):
        declared = format_named(self.format)
        for path in self.files():
            stream = self.open(path)
            assert isinstance(stream, DocumentStream)
            result = finish_result(stream, list(stream.pages()), path)
            numbers = [page.number for page in result.pages]
            assert numbers and all(isinstance(n, int) and n >= 1 for n in numbers), path.name
            assert numbers == sorted(set(numbers)), f"{path.name}: pages must rise: {numbers}"
            if declared.pages != "either":
                assert result.synthetic_pages == (declared.pages == "synthetic"), path.name
            if result.synthetic_pages or declared.pages == "real":  # a book's printed numbers may start anywhere
                assert numbers == list(range(1, len(numbers) + 1)), path.name
            tilde = "~" if result.synthetic_pages else ""
            assert [page_label(n, synthetic=result.synthetic_pages) for n in numbers[:3]] == [
                f"p. {tilde}{n}" for n in numbers[:3]
            ]
            assert any(page.text.strip() for page in result.pages) and result.title.strip(), path.name
            assert all(isinstance(w, str) and w for w in result.warnings)

    def test_its_text_holds_what_the_files_say(self):
        assert self.expected, "name at least one phrase the reader must find"
        by_name = {path.name: path for path in self.files()}
        for name, phrase in self.expected.items():
            text = "\n".join(page.text for page in self.read(by_name[name]).pages)
            assert phrase in text, f"{name}: {phrase!r} not in {text[:300]!r}"

    def test_no_text_is_refused_in_the_readers_own_words(self):
        error = self.open(self.files()[0]).no_text_error()
        assert isinstance(error, IngestError) and str(error).strip()

    # -- damage -----------------------------------------------------------------------------
    def test_a_damaged_file_gets_a_docdesk_error(self, tmp_path):
        path = self.damaged(tmp_path)
        with pytest.raises(IngestError) as caught:
            self.read(path)
        assert str(caught.value).strip()

    def test_a_cut_file_is_read_or_refused_never_a_raw_exception(self, tmp_path):
        source = min(self.files(), key=lambda path: path.stat().st_size)
        data = source.read_bytes()
        for fraction in CUTS:
            cut = tmp_path / f"cut-{fraction}{source.suffix}"
            cut.write_bytes(data[: max(1, int(len(data) * fraction))])
            self._reads_or_refuses(cut)

    # -- cancelling between pages ---------------------------------------------------------------
    def test_cancel_between_pages_leaves_the_rest_unread(self, tmp_path, monkeypatch):
        """The pipeline cancels by no longer asking for pages: the reader stops at the page it
        gave, closes cleanly, and the same file reads whole afterwards."""
        path = self.multi_page(tmp_path)
        counted = self.work(monkeypatch)
        stream = self.open(path)
        pages = stream.pages()
        taken = list(islice(pages, 1))
        pages.close()  # what dropping a half-read stream does
        done_at_cancel = counted() if counted else 0
        assert len(taken) == 1 and taken[0].number >= 1
        whole = self.read(path)
        assert len(whole.pages) > 1, f"{path.name} has one page: name a longer file in multi_page()"
        if counted is not None:  # work for one page, or one unit of work (a 1 MB piece holds many pages)
            share = math.ceil((counted() - done_at_cancel) * len(taken) / len(whole.pages))
            assert done_at_cancel <= max(1, share), f"read ahead: {done_at_cancel} units of work for one page"
        elif not isinstance(stream, WholeDocument):
            pytest.fail("a streaming reader names its work(), so the contract can see it stop")

    # -- limits ---------------------------------------------------------------------------------
    def test_input_past_the_limits_is_refused_or_cut(self, tmp_path, monkeypatch):
        checked = self.check_other_limits(tmp_path, monkeypatch)
        bomb = self.oversized(tmp_path)
        if bomb is not None:
            started = time.perf_counter()
            with pytest.raises(OversizedDocument, match=r"\S"):
                self.read(bomb)
            assert time.perf_counter() - started < REFUSE_SECONDS
            checked += 1
        if self.text_limit is not None:
            self._check_text_limit(monkeypatch)
            checked += 1
        if not checked:
            assert self.no_limit, "a reader names its limits, or says in no_limit why it has none"
            pytest.skip(self.no_limit)

    def _check_text_limit(self, monkeypatch) -> None:
        path = self.big_file()
        full = sum(len(page.text) for page in self.read(path).pages)
        assert full > 2 * LOWERED_LIMIT, f"{path.name} is too short to show the limit"
        module, constant = self.text_limit
        monkeypatch.setattr(f"{module}.{constant}", LOWERED_LIMIT)
        cut = sum(len(page.text) for page in self.read(path).pages)
        assert cut < full and cut <= LOWERED_LIMIT + self.overshoot, (cut, full)


def ooxml_damaged(source: Path, tmp_path: Path) -> Path:
    """An Office file whose main part (the one the table's sniff looks for) is not XML any more."""
    part = format_named(detect_format(source, source.read_bytes())).sniff.missing
    return zip_with(source, tmp_path / f"damaged{source.suffix}", {part: b"<broken"})

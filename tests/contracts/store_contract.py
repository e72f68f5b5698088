"""The contract every store of a library passes (docs/ARCHITECTURE.md §8), Haystack-style.

A store here is an object over one library folder (Library, ChatStore, SummaryCache,
VectorIndex). A test module subclasses StoreContract (and RemovalContract where the store can
remove), names the class Test..., and supplies:

- `open(folder)`: a new instance on the folder, with its own SQLite connection;
- `close(store)`;
- `write(store, n) -> key`: store the n-th item (distinct for each n);
- `read(store, key)`: what the store gives back for key, comparable with ==; None where the
  store says it has nothing (an empty result, or the store's LibraryError with a message);
- `expected(n, key)`: what read gives after write(n);
- `check_consistent(store) -> int`: read everything the instance sees, assert the store's
  invariants (no half-written item), return how many whole items it saw;
- `remove(store, key)`, for RemovalContract.

Every store is the real one on a real library folder; items are written through the real
pipeline (the embedder is the session's real model).
"""

from __future__ import annotations

import threading

import pytest

from ingest.errors import LibraryError

MISSING = "0" * 64  # no item has this key: not a sha256 of anything stored here, nor a chat id


class StoreContract:
    writes_while_reading = 6

    # -- what a subclass supplies ---------------------------------------------------------
    def open(self, folder):
        raise NotImplementedError

    def close(self, store) -> None:
        store.library.close()

    def write(self, store, n: int):
        raise NotImplementedError

    def read(self, store, key):
        raise NotImplementedError

    def expected(self, n: int, key):
        raise NotImplementedError

    def check_consistent(self, store) -> int:
        raise NotImplementedError

    # -- fixtures ---------------------------------------------------------------------------
    @pytest.fixture
    def folder(self, tmp_path):
        return tmp_path / "library"

    @pytest.fixture
    def store(self, folder):
        store = self.open(folder)
        yield store
        self.close(store)

    @staticmethod
    def absent(call):
        """None when the store says plainly that it has nothing; anything else is its answer."""
        try:
            found = call()
        except LibraryError as exc:
            assert str(exc), "a LibraryError must say what is missing"
            return None
        return found if found not in ([], {}, ()) else None

    # -- the contract -------------------------------------------------------------------------
    def test_a_write_reads_back(self, store):
        keys = [self.write(store, n) for n in range(2)]
        assert keys[0] != keys[1]
        assert [self.read(store, key) for key in keys] == [self.expected(n, key) for n, key in enumerate(keys)]
        assert self.check_consistent(store) == 2

    def test_a_write_survives_closing_and_reopening(self, folder):
        store = self.open(folder)
        key = self.write(store, 0)
        self.close(store)
        again = self.open(folder)
        try:
            assert self.read(again, key) == self.expected(0, key)
            assert self.check_consistent(again) == 1
        finally:
            self.close(again)

    def test_a_second_instance_sees_a_write_without_reopening(self, store, folder):
        other = self.open(folder)
        try:
            assert self.check_consistent(other) == 0  # opened before the write
            key = self.write(store, 0)
            assert self.read(other, key) == self.expected(0, key)
            assert self.check_consistent(other) == 1
        finally:
            self.close(other)

    def test_a_missing_key_reads_as_nothing_not_a_crash(self, store):
        assert self.read(store, MISSING) is None
        key = self.write(store, 0)
        assert self.read(store, MISSING) is None  # nor is it confused with what is there
        assert self.read(store, key) == self.expected(0, key)

    def test_a_reader_during_writes_sees_only_whole_items(self, store, folder):
        reader = self.open(folder)
        keys: list = []
        failure: list[BaseException] = []

        def writer() -> None:
            try:
                for n in range(self.writes_while_reading):
                    keys.append(self.write(store, n))
            except BaseException as exc:  # re-raised below, on the test's thread
                failure.append(exc)

        thread = threading.Thread(target=writer)
        try:
            thread.start()
            seen = [self.check_consistent(reader)]
            while thread.is_alive():
                seen.append(self.check_consistent(reader))
            thread.join()
            if failure:
                raise failure[0]
            seen.append(self.check_consistent(reader))
            assert len(seen) > 2, "the reader never read while the writer wrote: write more"
            assert seen == sorted(seen), f"whole items seen went down: {seen}"
            assert seen[-1] == self.writes_while_reading
            assert [self.read(reader, k) for k in keys] == [self.expected(n, k) for n, k in enumerate(keys)]
        finally:
            thread.join()
            self.close(reader)


class RemovalContract:
    """For stores that remove items: a removed item is gone for every instance, and stays gone."""

    def remove(self, store, key) -> None:
        raise NotImplementedError

    def test_a_removed_item_is_gone_everywhere(self, store, folder):
        other = self.open(folder)
        try:
            keep, drop = self.write(store, 0), self.write(store, 1)
            assert self.read(other, drop) == self.expected(1, drop)
            self.remove(store, drop)
            assert self.read(store, drop) is None and self.read(other, drop) is None
            assert self.read(other, keep) == self.expected(0, keep)
            assert self.check_consistent(other) == 1
        finally:
            self.close(other)
        self.remove(store, MISSING)  # removing what is not there is harmless
        self.close(store)
        again = self.open(folder)
        try:
            assert self.read(again, drop) is None and self.read(again, keep) == self.expected(0, keep)
        finally:
            self.close(again)

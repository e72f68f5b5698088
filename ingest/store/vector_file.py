"""Reading and writing `vectors.faiss`: atomically, with the SHA-256 of what was written."""

from __future__ import annotations

import hashlib
import logging
import mmap
import os
import tempfile
import time
from pathlib import Path

log = logging.getLogger(__name__)


def read_verified(path: Path, digest: str | None, dim: int, count: int | None):
    """The index in the file if its checksum is `digest` and it holds `count` vectors of `dim`
    (the one this library wrote), else None: such a file is never trusted, not even in part."""
    if not digest or not path.exists():
        return None
    try:
        import faiss

        # Mapped, not read: the bytes are hashed where the page cache holds them, then FAISS reads
        # the same mapping straight into its lists. The mapping holds this file even if another
        # process renames a new one into its place, so what is parsed is what was hashed. At a
        # million passages (tests/bench/bench_scale.py): hash 0.34 s, read 0.09 s; the former
        # faiss.deserialize_index took 0.4 s and a second copy of the file in memory.
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if hashlib.sha256(data).hexdigest() != digest:
                log.warning("vector cache %s is not the one this library wrote: rebuilding", path)
                return None
            index = faiss.read_index(faiss.PyCallbackIOReader(_MappedReader(data)))
    except Exception as exc:  # MemoryError too: a damaged length field makes FAISS allocate petabytes
        log.warning("vector cache unreadable, rebuilding: %s", exc)
        return None
    return index if index.d == dim and index.ntotal == count else None


class _MappedReader:
    """FAISS's reader callback over a mapped file: the next `size` bytes, fewer only at its end."""

    def __init__(self, data: mmap.mmap) -> None:
        self.data = data
        self.position = 0

    def __call__(self, size: int) -> bytes:
        chunk = self.data[self.position : self.position + size]
        self.position += len(chunk)
        return chunk


def write_index(index, path: Path) -> str:
    """Write the index in place of `path` (a crash leaves the old file whole); its SHA-256."""
    import faiss

    # A name of its own: another process (or another index on this library) may be writing too.
    handle, name = tempfile.mkstemp(prefix="vectors.", suffix=".faiss.tmp", dir=path.parent)
    os.close(handle)
    temporary = Path(name)
    temporary.chmod(library_file_mode(path.parent))  # mkstemp's 0600 would hide it from the team
    try:
        faiss.write_index(index, str(temporary))
        with open(temporary, "rb+") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    remove_leftovers(path.parent)
    return digest


def remove_leftovers(folder: Path, older_than_s: float = 3600) -> None:
    """Temporary files of writes that a crash cut short (a live write is never that old)."""
    for leftover in folder.glob("vectors.*.faiss.tmp"):
        try:
            if time.time() - leftover.stat().st_mtime > older_than_s:
                leftover.unlink()
        except OSError:
            pass


def library_file_mode(folder: Path) -> int:
    """The mode the library's database has (who may read it may read its cache), else 0644 less the umask."""
    try:
        return (folder / "library.sqlite").stat().st_mode & 0o666
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o644 & ~mask


def short_reason(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else lines[-1] if lines else type(exc).__name__

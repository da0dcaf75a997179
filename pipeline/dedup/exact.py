"""Exact duplicates: one 128-bit key per normalised statement.

Two statements are exact duplicates when their normalised token sequences (see `normalize.py`:
case, whitespace, markdown/HTML/LaTeX markup, optionally digits and single-letter variables)
are identical. The key is xxh3-128 over the tokens' 64-bit hashes.
"""

from __future__ import annotations

import numpy as np
import xxhash


def exact_key(token_hashes: np.ndarray) -> bytes:
    """xxh3-128 of a token-hash sequence (see `minhash.token_hashes`)."""
    return xxhash.xxh3_128_digest(np.ascontiguousarray(token_hashes, dtype=np.uint64).tobytes())


class ExactIndex:
    """Remembers the first record seen with each key."""

    def __init__(self) -> None:
        self._first: dict[bytes, int] = {}

    def first_or_add(self, key: bytes, node: int) -> int | None:
        """The node first seen with `key`, or None (and `node` becomes that first node)."""
        first = self._first.get(key)
        if first is None:
            self._first[key] = node
        return first

    def __len__(self) -> int:
        return len(self._first)

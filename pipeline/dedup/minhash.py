"""Shingles, MinHash signatures (datasketch), the LSH candidate index and union-find.

Hashing: every normalised token is hashed with xxh3-64 (cached per distinct token); a shingle
(word or character n-gram) is the order-sensitive polynomial combination of its token (or code
point) hashes, finished with the MurmurHash3 64-bit mixer, all vectorised in numpy. The 32-bit
shingle hashes are what the sketches see: `MinHash.bulk` (datasketch's default "affine32"
permutation scheme) gets them through its `hashfunc` hook, so no shingle is hashed twice and the
exact Jaccard check compares the very sets the sketches summarise.

LSH: bands x rows come from datasketch's MinHashLSH optimiser (`_optimal_param`: minimise the
weighted false-positive and false-negative areas for the threshold), and the band tables are a
`datasketch.MinHashLSH`'s storage (see `CandidateIndex`). Because every candidate pair is
verified with the exact Jaccard of its shingle sets, an LSH false positive costs only a set
intersection, while a false negative is a lost duplicate: the default weights lean toward recall.
"""

from __future__ import annotations

import numpy as np
import xxhash
from datasketch import MinHash, MinHashLSH
from datasketch.lsh import _optimal_param

from microcoder.pipeline.dedup.normalize import VARIABLE

SHINGLE_KINDS = ("word", "char")
_EMPTY64 = np.zeros(0, dtype=np.uint64)
_EMPTY32 = np.zeros(0, dtype=np.uint32)
# An odd 64-bit multiplier for the polynomial window hash (the golden-ratio constant).
_POLY = np.uint64(0x9E3779B97F4A7C15)


def _fmix64(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finaliser: an avalanching bijection (arithmetic wraps mod 2^64)."""
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xFF51AFD7ED558CCD)
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xC4CEB9FE1A85EC53)
    return h ^ (h >> np.uint64(33))


class _TokenHashCache(dict):
    """token -> xxh3-64, filled on first use. Statement vocabularies are small (a few hundred
    thousand distinct tokens), so a dict lookup replaces most hash calls; past `limit` entries new
    tokens are hashed without being stored, which bounds memory. With `mask_variables`, every
    single-letter token hashes like the placeholder `normalize.VARIABLE` (see `tokenize`)."""

    limit = 1_000_000

    def __init__(self, mask_variables: bool):
        super().__init__()
        self.mask_variables = mask_variables

    def __missing__(self, token: str) -> int:
        masked = self.mask_variables and len(token) == 1 and token.isalpha()
        h = xxhash.xxh3_64_intdigest((VARIABLE if masked else token).encode())
        if len(self) < self.limit:
            self[token] = h
        return h


_TOKEN_HASHES = {False: _TokenHashCache(False), True: _TokenHashCache(True)}


def token_hashes(tokens: list[str], mask_variables: bool = False) -> np.ndarray:
    """xxh3-64 of every token, in order (uint64); optionally with single letters masked."""
    lookup = _TOKEN_HASHES[mask_variables].__getitem__
    return np.fromiter(map(lookup, tokens), dtype=np.uint64, count=len(tokens))


def window_hashes(values: np.ndarray, n: int) -> np.ndarray:
    """Order-sensitive 64-bit hash of every window of `n` consecutive values (uint64 in, uint64 out).

    A sequence shorter than `n` yields one hash of the whole sequence, so short texts still have
    a shingle; an empty sequence yields none."""
    if values.size == 0:
        return _EMPTY64
    n = min(n, values.size)
    count = values.size - n + 1
    with np.errstate(over="ignore"):
        h = np.full(count, np.uint64(n), dtype=np.uint64)
        for k in range(n):
            h = h * _POLY + values[k:k + count]
        return _fmix64(h)


def word_shingles(hashes: np.ndarray, size: int) -> np.ndarray:
    """Sorted unique 32-bit hashes of the word `size`-grams of a token-hash sequence."""
    h = window_hashes(hashes, size)
    return np.unique((h >> np.uint64(32)).astype(np.uint32)) if h.size else _EMPTY32


def char_shingles(tokens: list[str], size: int) -> np.ndarray:
    """Sorted unique 32-bit hashes of the character `size`-grams of the tokens joined by spaces."""
    points = np.frombuffer(" ".join(tokens).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    with np.errstate(over="ignore"):
        h = window_hashes(_fmix64(points + _POLY), size)
    return np.unique((h >> np.uint64(32)).astype(np.uint32)) if h.size else _EMPTY32


def ngram_set(hashes: np.ndarray, n: int) -> np.ndarray:
    """Sorted unique 64-bit hashes of the word `n`-grams of a token-hash sequence (none when it
    has fewer than `n` tokens)."""
    return np.unique(window_hashes(hashes, n)) if hashes.size >= n else _EMPTY64


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard similarity of two sorted unique hash arrays (0.0 when both are empty)."""
    if a.size == 0 or b.size == 0:
        return 0.0
    inter = np.intersect1d(a, b, assume_unique=True).size
    return inter / (a.size + b.size - inter)


def _whole_set(values: np.ndarray) -> np.ndarray:
    return values


def minhashes(shingle_sets: list[np.ndarray], num_perm: int, seed: int) -> list[MinHash]:
    """datasketch MinHash of every shingle set (sets of 32-bit hashes), with one `MinHash.bulk`.

    Each set is handed to `update_batch` as a one-element batch whose `hashfunc` returns the
    whole array: datasketch turns the hash list into a column vector before permuting, so this
    gives exactly the per-element result (a test checks it) without a Python call per shingle."""
    return MinHash.bulk(([s] for s in shingle_sets), num_perm=num_perm, seed=seed, hashfunc=_whole_set)


def lsh_params(threshold: float, num_perm: int, false_negative_weight: float = 0.5) -> tuple[int, int]:
    """(bands, rows) that datasketch's MinHashLSH would pick for these weights (its `_optimal_param`);
    at least 2 bands, which MinHashLSH requires (a threshold near 1 would otherwise give one)."""
    bands, rows = _optimal_param(threshold, num_perm, 1.0 - false_negative_weight, false_negative_weight)
    return (bands, rows) if bands >= 2 else (2, num_perm // 2)


class CandidateIndex:
    """Banded LSH over int keys, on a `datasketch.MinHashLSH` (its bands x rows and storage).

    Used query-then-insert, so each candidate pair is seen once. We work on the index's band
    tables directly: the band keys of a sketch are computed once for the query and the insert,
    and the per-key registry MinHashLSH keeps for removals (unused here) is skipped (about 0.3 KB
    per problem). Band keys are xxh3-64 digests of the band's rows. Only the storage's `get` and
    `insert` are used, so any MinHashLSH storage backend would do.
    """

    def __init__(self, threshold: float, num_perm: int, false_negative_weight: float = 0.5):
        params = lsh_params(threshold, num_perm, false_negative_weight)
        self.lsh = MinHashLSH(threshold=threshold, num_perm=num_perm, params=params)
        self.num_perm = num_perm

    @property
    def bands(self) -> int:
        return self.lsh.b

    @property
    def rows(self) -> int:
        return self.lsh.r

    def _band_keys(self, mh: MinHash) -> list[bytes]:
        if len(mh) != self.num_perm:
            raise ValueError(f"expected a MinHash with {self.num_perm} permutations, got {len(mh)}")
        hv = mh.hashvalues
        return [xxhash.xxh3_64_digest(hv[start:end].tobytes()) for start, end in self.lsh.hashranges]

    def band_ints(self, mh: MinHash) -> np.ndarray:
        """The band keys of `mh` as int64 (the same xxh3-64 digests as the tables' keys), for the
        grouped shuffle of executor=ray: two sketches share a bucket here iff they do in the tables."""
        return np.frombuffer(b"".join(self._band_keys(mh)), dtype="<i8")

    def query(self, mh: MinHash) -> list[int]:
        """Keys that share at least one band with `mh`, ascending."""
        found: set[int] = set()
        for key, table in zip(self._band_keys(mh), self.lsh.hashtables, strict=True):
            found.update(table.get(key))
        return sorted(found)

    def insert(self, key: int, mh: MinHash) -> None:
        for band, table in zip(self._band_keys(mh), self.lsh.hashtables, strict=True):
            table.insert(band, key)

    def query_insert(self, key: int, mh: MinHash) -> list[int]:
        """Keys already indexed that share a band with `mh` (ascending), then index `mh` under `key`."""
        found: set[int] = set()
        for band, table in zip(self._band_keys(mh), self.lsh.hashtables, strict=True):
            found.update(table.get(band))
            table.insert(band, key)
        found.discard(key)
        return sorted(found)


class UnionFind:
    """Disjoint sets over 0..n-1 (grows on demand), union by size with path halving."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.size: list[int] = []

    def add(self) -> int:
        self.parent.append(len(self.parent))
        self.size.append(1)
        return len(self.parent) - 1

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]

    def groups(self) -> dict[int, list[int]]:
        """Root -> members (ascending) for every set with more than one member."""
        out: dict[int, list[int]] = {}
        for x in range(len(self.parent)):
            if self.size[self.find(x)] > 1:
                out.setdefault(self.find(x), []).append(x)
        return out

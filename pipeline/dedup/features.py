"""What dedup and decontamination compare: the features of one statement, computed once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microcoder.pipeline.dedup.exact import exact_key
from microcoder.pipeline.dedup.minhash import char_shingles, ngram_set, token_hashes, word_shingles
from microcoder.pipeline.dedup.normalize import tokenize


@dataclass(slots=True)
class Features:
    token_hashes: np.ndarray  # uint64 per normalised token (single letters masked if asked)
    shingles: np.ndarray  # sorted unique uint32 shingle hashes
    key: bytes | None  # exact key; None for a statement without any token

    def ngrams(self, n: int) -> np.ndarray:
        """Sorted unique word n-gram hashes (for benchmark overlap)."""
        return ngram_set(self.token_hashes, n)


class Featurizer:
    """Statement text -> Features, with one normalisation and shingling setting."""

    def __init__(self, shingle_kind: str = "word", shingle_size: int = 5, mask_digits: bool = False,
                 mask_variables: bool = False):
        self.kind, self.size = shingle_kind, shingle_size
        self.mask_digits, self.mask_variables = mask_digits, mask_variables

    def __call__(self, text: str) -> Features:
        tokens = tokenize(text or "", mask_digits=self.mask_digits)
        hashes = token_hashes(tokens, self.mask_variables)
        if self.kind == "word":
            shingles = word_shingles(hashes, self.size)
        else:
            if self.mask_variables:  # char shingles see the masked text
                tokens = tokenize(text or "", mask_digits=self.mask_digits, mask_variables=True)
            shingles = char_shingles(tokens, self.size)
        return Features(hashes, shingles, exact_key(hashes) if hashes.size else None)

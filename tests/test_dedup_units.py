"""Unit tests of the dedup building blocks: normalisation, shingles/MinHash/LSH, representative rule."""

from __future__ import annotations

import numpy as np
import pytest
from datasketch import MinHash

from microcoder.pipeline.dedup.exact import ExactIndex, exact_key
from microcoder.pipeline.dedup.features import Featurizer
from microcoder.pipeline.dedup.minhash import (
    CandidateIndex,
    UnionFind,
    char_shingles,
    jaccard,
    lsh_params,
    minhashes,
    ngram_set,
    token_hashes,
    window_hashes,
    word_shingles,
)
from microcoder.pipeline.dedup.normalize import tokenize
from microcoder.pipeline.dedup.representative import Facts, can_merge_tests, order_members, union_tests
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase

PLAIN = "Given n integers a_1, ..., a_n with 1 <= n <= 100000. Print the maximum of a_i * a_j over i != j."
MARKDOWN = ("## Statement\n\nGiven $n$ integers $a_{1}, \\ldots, a_{n}$ with $1 \\le n \\le 10^{5}$.\n\n"
            "**Print** the $\\max$ of $a_i \\cdot a_j$ over $i \\neq j$.")
UNICODE = "Given n integers a₁, …, aₙ with 1 ≤ n ≤ 100000. Print the maximum of aᵢ × aⱼ over i ≠ j."
HTML = "<p>Given <var>n</var> integers a_1, ..., a_n with 1 &le; n &lt;= 100000.</p><p>Print the maximum of a_i * a_j over i != j.</p>"


# --- normalisation ---------------------------------------------------------------------------
def test_formatting_variants_normalise_alike():
    plain = tokenize(PLAIN)
    assert plain == tokenize(UNICODE)
    assert plain == tokenize(HTML)
    assert plain == tokenize(PLAIN.upper().replace(" ", "   \n "))
    assert " ".join(plain).startswith("given n integers a 1 a n with 1 le n le 100000")


def test_latex_markdown_differs_only_in_what_it_says():
    # LaTeX writes 10^{5} and \max where the plain text has 100000 and "maximum": only those words differ.
    md, plain = tokenize(MARKDOWN), tokenize(PLAIN)
    assert md[:2] == ["statement", "given"]
    assert set(md) ^ set(plain) == {"statement", "10", "5", "100000", "max", "maximum"}


def test_variable_masking_in_tokens_and_hashes():
    a = "Given n and k, print n + k for every pair (n, k)."
    b = "Given p and q, print p + q for every pair (p, q)."
    assert tokenize(a) != tokenize(b)
    assert tokenize(a, mask_variables=True) == tokenize(b, mask_variables=True)
    # Masking while hashing is the same as hashing masked tokens.
    assert np.array_equal(token_hashes(tokenize(a), mask_variables=True),
                          token_hashes(tokenize(a, mask_variables=True)))
    assert not np.array_equal(token_hashes(tokenize(a)), token_hashes(tokenize(b)))


def test_featurizer():
    plain = Featurizer("word", 5, mask_digits=True, mask_variables=True)(PLAIN)
    html = Featurizer("word", 5, mask_digits=True, mask_variables=True)(HTML.replace("100000", "5000"))
    assert plain.key == html.key and np.array_equal(plain.shingles, html.shingles)
    assert Featurizer()("$$ ** $$").key is None
    char = Featurizer("char", 4, mask_variables=True)("Given n")
    assert np.array_equal(char.shingles, char_shingles(["given", "_"], 4))
    assert plain.ngrams(13).size == len(tokenize(PLAIN)) - 12


def test_digit_masking():
    a = "Read 3 numbers, print their sum modulo 1000000007."
    b = "Read 5 numbers, print their sum modulo 998244353."
    assert tokenize(a) != tokenize(b)
    assert tokenize(a, mask_digits=True) == tokenize(b, mask_digits=True)


def test_maths_is_not_mistaken_for_html():
    assert tokenize("if a<b and c>d then") == ["if", "a", "lt", "b", "and", "c", "gt", "d", "then"]
    assert tokenize("x <b>bold</b> y") == ["x", "bold", "y"]


def _key(text: str) -> bytes:
    return exact_key(token_hashes(tokenize(text)))


def test_exact_key_and_index():
    assert _key(PLAIN) == _key(HTML)
    assert _key(PLAIN) != _key(PLAIN + " extra")
    idx = ExactIndex()
    assert idx.first_or_add(b"k", 0) is None
    assert idx.first_or_add(b"k", 5) == 0
    assert len(idx) == 1


# --- shingles, MinHash, LSH ------------------------------------------------------------------
def test_window_hashes_order_sensitive_and_short_sequences():
    v = np.array([1, 2, 3, 4], dtype=np.uint64)
    assert window_hashes(v, 2).size == 3
    assert window_hashes(v, 10).size == 1  # shorter than n: one hash of the whole sequence
    assert window_hashes(np.zeros(0, dtype=np.uint64), 3).size == 0
    assert window_hashes(np.array([1, 2], dtype=np.uint64), 2)[0] != window_hashes(np.array([2, 1], dtype=np.uint64), 2)[0]


@pytest.mark.parametrize("kind,size", [("word", 5), ("word", 1), ("char", 5)])
def test_shingles_are_sorted_unique_and_deterministic(kind, size):
    toks = tokenize(PLAIN)
    def shingles(tokens):
        return word_shingles(token_hashes(tokens), size) if kind == "word" else char_shingles(tokens, size)

    a, b = shingles(toks), shingles(list(toks))
    assert a.dtype == np.uint32 and np.array_equal(a, b)
    assert np.all(np.diff(a.astype(np.int64)) > 0)
    if kind == "word":
        assert a.size == len(set(zip(*[toks[i:] for i in range(size)], strict=False)))


def test_ngram_sets_need_n_tokens():
    assert ngram_set(token_hashes(["a"] * 5), 13).size == 0
    assert ngram_set(token_hashes([str(i) for i in range(20)]), 13).size == 8


def test_jaccard_exact():
    a = np.array([1, 2, 3, 4], dtype=np.uint32)
    b = np.array([3, 4, 5], dtype=np.uint32)
    assert jaccard(a, b) == pytest.approx(2 / 5)
    assert jaccard(a, a) == 1.0
    assert jaccard(a, np.zeros(0, dtype=np.uint32)) == 0.0


def test_minhashes_match_datasketch_update_batch():
    sets = [word_shingles(token_hashes(tokenize(t)), 3) for t in (PLAIN, MARKDOWN)]
    bulk = minhashes(sets, num_perm=64, seed=7)
    for s, mh in zip(sets, bulk, strict=True):
        ref = MinHash(num_perm=64, seed=7, hashfunc=lambda x: x)
        ref.update_batch(s.tolist())
        assert np.array_equal(mh.hashvalues, ref.hashvalues)
    est, exact = bulk[0].jaccard(bulk[1]), jaccard(*sets)
    assert abs(est - exact) < 0.25


def test_lsh_params_follow_datasketch_and_lean_to_recall():
    from datasketch import MinHashLSH

    default = MinHashLSH(threshold=0.7, num_perm=128)
    assert lsh_params(0.7, 128, 0.5) == (default.b, default.r)
    b, r = lsh_params(0.7, 128, 0.9)
    # P(candidate | J=0.75) = 1 - (1 - J^r)^b: recall-leaning weights find more true pairs.
    assert 1 - (1 - 0.75 ** r) ** b > 1 - (1 - 0.75 ** default.r) ** default.b


def test_candidate_index_finds_near_duplicate_not_unrelated():
    base = " ".join(f"word{i}" for i in range(200))
    near = base.replace("word100", "other")  # J ~ 0.95 on 5-word shingles
    unrelated = " ".join(f"thing{i}" for i in range(200))
    sets = [word_shingles(token_hashes(tokenize(t)), 5) for t in (base, near, unrelated)]
    mhs = minhashes(sets, 128, 1)
    idx = CandidateIndex(0.7, 128, 0.9)
    assert idx.query_insert(0, mhs[0]) == []
    assert idx.query_insert(1, mhs[1]) == [0]
    assert idx.query_insert(2, mhs[2]) == []
    assert (idx.bands, idx.rows) == lsh_params(0.7, 128, 0.9)


def test_union_find_groups():
    uf = UnionFind()
    for _ in range(6):
        uf.add()
    uf.union(0, 3)
    uf.union(3, 5)
    uf.union(1, 2)
    groups = sorted(uf.groups().values())
    assert groups == [[0, 3, 5], [1, 2]]
    assert uf.find(5) == uf.find(0) != uf.find(4)


# --- representative rule and test merging ------------------------------------------------------
def _p(id: str, source: str = "a", tests: int = 1, refs: bool = False, date: str | None = None, **kw) -> Problem:
    return Problem(id=id, source=source, statement="s", style=kw.pop("style", "stdio"),
                   tests=[TestCase(str(i), str(i)) for i in range(tests)], contest_date=date,
                   reference_solutions=[ReferenceSolution("python", "print(1)")] if refs else [], **kw)


@pytest.mark.parametrize("winner,loser,priority", [
    (_p("z", tests=3), _p("a", tests=2, refs=True, date="2025-01-01"), []),  # more tests first
    (_p("z", refs=True), _p("a", source="cf", date="2025-01-01"), ["cf"]),  # then reference solutions
    (_p("z", source="cf"), _p("a", source="taco", date="2025-01-01"), ["cf", "taco"]),  # then source priority
    (_p("z", source="listed"), _p("a", source="unlisted"), ["listed"]),  # listed beats unlisted
    (_p("z", date="2024-05-01"), _p("a", date="2023-05-01T00:00:00"), []),  # then newer contest
    (_p("z", date="2020-01-01"), _p("a"), []),  # a dated record beats an undated one
    (_p("a"), _p("b"), []),  # then id
])
def test_representative_rule(winner, loser, priority):
    facts = [Facts.of(loser), Facts.of(winner)]
    assert order_members([0, 1], facts, priority) == [1, 0]
    assert order_members([1, 0], facts, priority) == [1, 0]


def test_can_merge_tests_and_union():
    kept = _p("k", tests=2)
    same = _p("s", tests=3)  # shares inputs 0, 1 with equal outputs
    other = Problem(id="o", source="a", statement="s", style="stdio", tests=[TestCase("0", "different")])
    func = _p("f", tests=2, style="functional", entry_point="Solution().go")
    assert can_merge_tests(Facts.of(kept), Facts.of(same))
    assert not can_merge_tests(Facts.of(kept), Facts.of(other))
    assert not can_merge_tests(Facts.of(kept), Facts.of(func))  # style differs
    assert not can_merge_tests(Facts.of(kept, with_public_tests=False), Facts.of(same))
    added = union_tests(kept.tests, same.tests)
    assert [t.input for t in added] == ["2"]
    assert union_tests(kept.tests, [TestCase("1 ", "1\n"), TestCase("9", "9", "private")])[0].kind == "private"
    assert union_tests(kept.tests, other.tests) is None

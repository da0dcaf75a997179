"""Test strength in the field's terms (CodeContests-O, HardTests): measured on known solutions.

- TPR (true positive rate) = share of *correct* solutions that pass every kept test;
- TNR (true negative rate) = share of *incorrect* solutions that fail at least one kept test.

Correct solutions are a problem's references that finished (plus accepted submissions where a
source ships them); incorrect ones are the known-wrong solutions a source ships. Mutants of the
references are a third kind, reported beside them and never mixed into the same TNR. Every ratio
travels with the counts behind it, so that problems, sources and difficulties add up exactly.

One record, the same everywhere (validate, testgen, the card, `stats --summary`):

    {"correct": 3, "correct_passing": 3, "tpr": 1.0,
     "incorrect": 5, "incorrect_failing": 4, "tnr": 0.8}

A ratio with nothing behind it is None, never 0 or 1.

In-sample and held-out (issue 36). A figure over the solutions that chose the tests (the references
that voted on the outputs and set the time limit, the known-wrong solutions the caps covered or the
search hunted) says little: with policy `all` every voting reference passes by construction. So
each problem's solutions of each kind are also split into folds (`folds_of`, seeded, by content: no
timing or order decides it) and each fold is measured on tests chosen without it: the *held-out*
record, same shape, reported beside the in-sample one, never instead of it. A problem with one
reference cannot hold it out: its held-out TPR is None (counted), never 100%.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

KEYS = ("correct", "correct_passing", "incorrect", "incorrect_failing")


def ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def record(correct: int = 0, correct_passing: int = 0, incorrect: int = 0, incorrect_failing: int = 0) -> dict[str, Any]:
    """One strength record; counts must be consistent (passing <= correct, failing <= incorrect)."""
    if not (0 <= correct_passing <= correct and 0 <= incorrect_failing <= incorrect):
        raise ValueError(f"inconsistent strength counts: {correct_passing}/{correct} passing, "
                         f"{incorrect_failing}/{incorrect} failing")
    return {"correct": correct, "correct_passing": correct_passing, "tpr": ratio(correct_passing, correct),
            "incorrect": incorrect, "incorrect_failing": incorrect_failing, "tnr": ratio(incorrect_failing, incorrect)}


def add(records: Iterable[dict[str, Any] | None]) -> dict[str, Any]:
    """Records summed count by count (the ratios recomputed from the sums, never averaged)."""
    totals = dict.fromkeys(KEYS, 0)
    for r in records:
        if r:
            for k in KEYS:
                totals[k] += int(r.get(k) or 0)
    return record(**totals)


def by_group(rows: Iterable[tuple[str | None, dict[str, Any] | None]], missing: str = "unknown") -> dict[str, dict[str, Any]]:
    """{group: summed record} for (group, record) pairs: per source, per difficulty. Groups with
    no solution of either kind are left out; a None group is `missing`."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for group, r in rows:
        if r and (r.get("correct") or r.get("incorrect")):
            groups.setdefault(group or missing, []).append(r)
    return {g: add(rs) for g, rs in sorted(groups.items())}


def describe(r: dict[str, Any] | None) -> str:
    """`TPR 100.0% (3/3), TNR 80.0% (4/5)`; a side with no solutions reads `n/a (0)`."""
    if not r:
        return "TPR n/a (0), TNR n/a (0)"

    def side(name: str, part: str, whole: str, rate: str) -> str:
        if not r.get(whole):
            return f"{name} n/a (0)"
        return f"{name} {100 * r[rate]:.1f}% ({r[part]}/{r[whole]})"

    return f"{side('TPR', 'correct_passing', 'correct', 'tpr')}, {side('TNR', 'incorrect_failing', 'incorrect', 'tnr')}"


def fold_rank_key(seed: int, problem_id: str, language: str, code: str) -> str:
    """A solution's place in its problem's seeded order: a hash of the seed, the problem id and the
    solution's content only (so the split never depends on the order solutions came in, on timing
    or on the machine)."""
    return hashlib.sha256(f"{seed}\0{problem_id}\0{language}\0{code}".encode()).hexdigest()


def folds_of(seed: int, problem_id: str, programs: Sequence[tuple[str, str]], folds: int,
             keep_one: bool = False) -> list[int | None]:
    """Per program (language, code), its fold in 0..folds-1 (the seeded order dealt round-robin, so
    the folds differ in size by one at most), or None where it is never held out: every program when
    `folds` < 2, and, with `keep_one` (references: one must remain to decide outputs and limits), a
    lone program. Identical programs get the same key; their tie is broken by position, which
    changes nothing measured since they are the same code."""
    if folds < 2 or not programs or (keep_one and len(programs) < 2):
        return [None] * len(programs)
    order = sorted(range(len(programs)), key=lambda i: (fold_rank_key(seed, problem_id, *programs[i]), i))
    out: list[int | None] = [None] * len(programs)
    for rank, i in enumerate(order):
        out[i] = rank % folds
    return out


def describe_pair(in_sample: dict[str, Any] | None, held_out: dict[str, Any] | None) -> str:
    """`held out: TPR .., TNR ..; in-sample: TPR .., TNR ..` (held-out first: the figure that says
    how the tests do on code they were not fitted to)."""
    return f"held out: {describe(held_out)}; in-sample: {describe(in_sample)}"

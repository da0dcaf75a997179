"""Which record of a duplicate cluster is kept, and which tests it may borrow from its aliases.

The kept record is the first one under this order (each rule breaks the previous one's ties):

1. more test cases (`len(tests)`; validation has not run yet, so every test counts);
2. has at least one reference solution;
3. source priority: the position of `source` in `source_priority` (params); listed sources beat
   unlisted ones, unlisted ones tie with each other;
4. newer `contest_date` (ISO date; a record without a date comes after every dated one);
5. smaller `id` (plain string order), so the choice never depends on input order.

The others become aliases `{id, source, similarity}` of the kept record, where `similarity` is
the exact Jaccard similarity of their shingle sets to the kept record's (1.0 for exact
duplicates).

Test merging (`merge_tests`): an alias lends its tests only when both records have the same
style (and, for functional problems, the same method name), both have public tests, they share
at least one public input and no shared public input has different expected outputs. Its tests
whose (whitespace-normalised) input the kept record lacks are appended; if any of its tests
contradicts a test already there (same input, other output), none of its tests are taken.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import xxhash

from pipeline.schema import Problem, TestCase, iso_date


def _norm(text: str) -> str:
    return " ".join(text.split())


def _h(text: str) -> int:
    return xxhash.xxh3_64_intdigest(_norm(text).encode())


def _date_ordinal(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return dt.date.fromisoformat(iso_date(value)).toordinal()
    except ValueError:
        return None


def method_name(entry_point: str | None) -> str:
    """`Solution().twoSum` and `twoSum` both name the method `twoSum`."""
    return (entry_point or "").rsplit(".", 1)[-1].strip()


@dataclass(slots=True)
class Facts:
    """What the representative rule and the merge check need from one record (kept in memory)."""

    id: str
    source: str
    n_tests: int
    has_reference: bool
    date_ordinal: int | None
    style: str
    method: str
    public_tests: dict[int, int] = field(default_factory=dict)  # hash(input) -> hash(output)

    @classmethod
    def build(cls, id: str, source: str, n_tests: int, has_reference: bool, contest_date: str | None, style: str,
              entry_point: str | None, tests: list[dict] | None = None) -> Facts:
        """Facts from column values; `tests` (dicts with input/output/kind) only when merging tests."""
        public = {_h(t["input"]): _h(t["output"]) for t in tests or [] if (t.get("kind") or "public") == "public"}
        return cls(id=id, source=source, n_tests=n_tests, has_reference=has_reference,
                   date_ordinal=_date_ordinal(contest_date), style=style,
                   method=method_name(entry_point) if style == "functional" else "", public_tests=public)

    @classmethod
    def of(cls, p: Problem, *, with_public_tests: bool = True) -> Facts:
        """Facts of a Problem; the public-test fingerprint (only needed to merge tests) is optional."""
        tests = [{"input": t.input, "output": t.output, "kind": t.kind} for t in p.tests] if with_public_tests else None
        return cls.build(p.id, p.source, len(p.tests), bool(p.reference_solutions), p.contest_date, p.style,
                         p.entry_point, tests)


def rank_key(f: Facts, priority: dict[str, int]) -> tuple:
    """Sort key: the smallest key is the record to keep (see the module docstring)."""
    date_rank = (0, -f.date_ordinal) if f.date_ordinal is not None else (1, 0)
    return (-f.n_tests, not f.has_reference, priority.get(f.source, len(priority)), date_rank, f.id)


def order_members(members: list[int], facts: list[Facts], source_priority: list[str]) -> list[int]:
    """Cluster members (node indices) best first: element 0 is the record to keep."""
    priority = {s: i for i, s in enumerate(source_priority)}
    return sorted(members, key=lambda n: rank_key(facts[n], priority))


def can_merge_tests(kept: Facts, alias: Facts) -> bool:
    """True when the alias's tests may be merged into the kept record (see the module docstring)."""
    if kept.style != alias.style or kept.method != alias.method:
        return False
    shared = kept.public_tests.keys() & alias.public_tests.keys()
    return bool(shared) and all(kept.public_tests[k] == alias.public_tests[k] for k in shared)


def union_tests(base: list[TestCase], extra: list[TestCase]) -> list[TestCase] | None:
    """Tests of `extra` whose input `base` lacks, or None if `extra` contradicts `base` anywhere."""
    seen = {_norm(t.input): _norm(t.output) for t in base}
    added: list[TestCase] = []
    for t in extra:
        key, out = _norm(t.input), _norm(t.output)
        if key in seen:
            if seen[key] != out:
                return None
            continue
        seen[key] = out
        added.append(TestCase(input=t.input, output=t.output, kind=t.kind))
    return added

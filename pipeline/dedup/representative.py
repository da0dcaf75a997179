"""Which record of a duplicate cluster is kept, and which tests it may borrow from its aliases.

The kept record is the first one under this order (each rule breaks the previous one's ties):

0. harder: difficulty (hard > medium > easy > none), then rating, so that of two versions of a
   problem whose tests agree ("I" and "II") the harder one is kept;
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

Near duplicates that are different problems (`different_problems`): two statements that read alike
once digits are masked can be versions of one problem with other bounds (LeetCode's "H-Index" and
"H-Index II") or siblings (pre-, in- and postorder traversal). A near pair is folded only when
its tests show the same behaviour: no shared test input with another expected output, and some
shared (most of them for problems titled as versions, "X" and "X II"); with no test shared, only
statements whose numbers are the same too. Problems without tests are folded on their text.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

import xxhash

from microcoder.pipeline.schema import Problem, TestCase, iso_date


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
    examples: dict[int, int] = field(default_factory=dict)  # the same, of a few tests (public first), always
    series: str = ""  # the title without a version suffix, marked: "Two Sum II" -> "#two sum", "Two Sum" -> "two sum"
    numbers: int = 0  # hash of the statement's numbers in order (what digit masking hides)
    hardness: tuple[int, int] = (0, 0)  # (difficulty rank, rating)

    @classmethod
    def build(cls, id: str, source: str, n_tests: int, has_reference: bool, contest_date: str | None, style: str,
              entry_point: str | None, tests: list[dict] | None = None, *, examples: list[dict] | None = None,
              statement: str = "", difficulty: str | None = None, rating: int | None = None,
              title: str = "") -> Facts:
        """Facts from column values; `tests` (dicts with input/output/kind) only when merging tests,
        `examples` (the same shape, a few) always."""
        public = {_h(t["input"]): _h(t["output"]) for t in tests or [] if (t.get("kind") or "public") == "public"}
        return cls(id=id, source=source, n_tests=n_tests, has_reference=has_reference,
                   date_ordinal=_date_ordinal(contest_date), style=style,
                   method=method_name(entry_point) if style == "functional" else "", public_tests=public,
                   examples={_h(t["input"]): _h(t["output"]) for t in examples or []},
                   numbers=_h(" ".join(_NUMBER.findall(statement))),
                   hardness=(DIFFICULTY_RANK.get((difficulty or "").strip().lower(), 0), rating or 0),
                   series=_series(title))

    @classmethod
    def of(cls, p: Problem, *, with_public_tests: bool = True) -> Facts:
        """Facts of a Problem; the public-test fingerprint (only needed to merge tests) is optional."""
        tests = [{"input": t.input, "output": t.output, "kind": t.kind} for t in p.tests] if with_public_tests else None
        ordered = sorted(p.tests, key=lambda t: t.kind != "public")[:EXAMPLES]  # samples first
        examples = [{"input": t.input, "output": t.output} for t in ordered]
        return cls.build(p.id, p.source, len(p.tests), bool(p.reference_solutions), p.contest_date, p.style,
                         p.entry_point, tests, examples=examples, statement=p.statement, difficulty=p.difficulty,
                         rating=p.rating, title=p.title)


EXAMPLES = 16  # tests per problem fingerprinted for `different_problems`
DIFFICULTY_RANK = {"easy": 1, "introductory": 1, "medium": 2, "interview": 2, "hard": 3, "competition": 3,
                   "very_hard": 4, "very hard": 4}
_NUMBER = re.compile(r"\d+")
_VERSION = re.compile(r"^(.*?)[\s_-]+(?:i{1,3}|iv|v|vi{1,3}|[2-9])$", re.IGNORECASE)


def _series(title: str) -> str:
    """The title without a version suffix, lower case, with `#` before it when there was one."""
    title = " ".join((title or "").split()).lower()
    m = _VERSION.match(title)
    return f"#{m.group(1)}" if m else title


def versions(a: Facts, b: Facts) -> bool:
    """Titled as versions of one problem ("Minimize Malware Spread" and "... II")."""
    return a.series.lstrip("#") == b.series.lstrip("#") != "" and "#" in (a.series[:1] + b.series[:1])


def different_problems(a: Facts, b: Facts) -> bool:
    """True when two near-duplicate statements are shown to be different problems (module docstring)."""
    shared = a.examples.keys() & b.examples.keys()
    if any(a.examples[k] != b.examples[k] for k in shared):
        return True
    if not a.examples or not b.examples:  # no tests to tell: the text decides
        return False
    if shared and versions(a, b):  # "I" and "II" often share their first sample: most must agree
        return 2 * len(shared) < min(len(a.examples), len(b.examples))
    return not shared and a.numbers != b.numbers


def rank_key(f: Facts, priority: dict[str, int]) -> tuple:
    """Sort key: the smallest key is the record to keep (see the module docstring)."""
    date_rank = (0, -f.date_ordinal) if f.date_ordinal is not None else (1, 0)
    return (-f.hardness[0], -f.hardness[1], -f.n_tests, not f.has_reference, priority.get(f.source, len(priority)),
            date_rank, f.id)


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
        added.append(TestCase(input=t.input, output=t.output, kind=t.kind, group=t.group))
    return added

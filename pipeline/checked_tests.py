"""Functional tests already checked to hold one JSON value per line, by content digest.

Every stage reads its input through `schema.validate_problem`, which parses each line of every
functional test as JSON. On the real sources' tests (640 MB in memory for 339 problems) that was
9-13 s of CPU in each of the six stages that read them, the same tests each time. Now a test is
checked once: a parquet file written by `io.problems_to_table` lists, in its schema metadata, the
digests of the functional tests it holds that passed the check, and a reader takes those as
checked. A digest covers the test's input and output (xxh3-64 over their lengths and bytes), so
an edited test has another digest and is checked again. The list depends only on the rows written,
so a file's bytes do not move with it.

A file written to claim checks that were never made skips this JSON check and nothing else: the
host code that parses test lines does so in a `try` (testgen's `space.parse_input`, the verdict's
`_loads`), and the judge's harness reports a line that is not JSON as that test's error.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

import xxhash

METADATA_KEY = b"microcoder.json_checked_tests"

_checked: set[int] = set()


def digest(test: dict[str, Any]) -> int:
    inp = test["input"].encode("utf-8", "surrogatepass")
    out = test["output"].encode("utf-8", "surrogatepass")
    h = xxhash.xxh3_64(len(inp).to_bytes(8, "little"))
    h.update(inp)
    h.update(out)
    return h.intdigest()


def is_checked(d: int) -> bool:
    return d in _checked


def mark_checked(d: int) -> None:
    _checked.add(d)


def metadata_of(rows: Iterable[dict[str, Any]]) -> dict[bytes, bytes]:
    """The schema metadata for rows about to be written: their checked functional tests' digests,
    sorted (the same rows give the same bytes); {} when there are none."""
    found = sorted({d for r in rows if r.get("style") == "functional"
                    for t in r.get("tests") or () if (d := digest(t)) in _checked})
    if not found:
        return {}
    return {METADATA_KEY: base64.b64encode(b"".join(d.to_bytes(8, "little") for d in found))}


def take_metadata(metadata: dict[bytes, bytes] | None) -> int:
    """Digests a file's schema metadata lists, taken as checked; how many (0 for another writer's
    file or a malformed value, which leave every test to be checked)."""
    raw = (metadata or {}).get(METADATA_KEY)
    if not raw:
        return 0
    try:
        packed = base64.b64decode(raw, validate=True)
    except ValueError:
        return 0
    if len(packed) % 8:
        return 0
    found = [int.from_bytes(packed[i:i + 8], "little") for i in range(0, len(packed), 8)]
    _checked.update(found)
    return len(found)

"""Derived time limits pinned in a committed file, so that a dataset version does not move with
the speed of the machine that built it.

A limit the source did not state is derived from the references' measured times (validate,
problemtools' rule). Measured on another machine, or on this one beside other work, the slowest
run moves and the rounded limit can move with it: the problem, its prompt, the warm start and
every later output then change. No rounding grid holds still under a 2x change of speed for every
problem (some slowest run always sits near a step), so a limit is pinned instead: validate writes
each derived limit with its measurement to `time_limits.jsonl` beside its outputs (metadata),
`microcoder pin-limits` copies those rows into the committed file (`validate.pinned_limits`), and
a rerun anywhere takes the pinned limit of a problem whose pin key still matches: the same
references, the same test inputs and the same rule settings. Change any of them and the limit is
derived again (and should be pinned again).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from microcoder.pipeline.io import atomic_path, content_hash
from microcoder.pipeline.schema import Problem


def pin_key(p: Problem, rule: dict[str, Any]) -> str:
    """What a derived limit is a function of, besides the machine: the references, the test inputs
    (in order: runs go smallest first, by input), and the rule's settings (`rule`)."""
    refs = [[r.language, r.code] for r in p.reference_solutions]
    inputs = [content_hash(t.input) for t in p.tests]
    return content_hash(p.id, json.dumps(refs), json.dumps(inputs), json.dumps(rule, sort_keys=True))


def read_pins(path: str | Path | None) -> dict[str, dict[str, Any]]:
    """Problem id -> pin row; {} without a file. A malformed file is an error (ValueError): a pin
    silently ignored would let the limits move again."""
    if path is None or not Path(path).exists():
        return {}
    pins = {}
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            pins[str(row["id"])] = {"key": str(row["key"]), "final_s": float(row["final_s"]),
                                    "capped": bool(row["capped"])}
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}:{n}: not a pinned time limit ({e!r:.80})") from None
    return pins


def write_rows(rows: list[dict[str, Any]], path: Path) -> None:
    """The derived limits of a run with their measurements (sorted by id: one file per content)."""
    with atomic_path(path, ".jsonl") as tmp:
        Path(tmp).write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in sorted(rows, key=lambda r: r["id"])))


def pin(measured: Path, pinned: Path) -> tuple[int, int]:
    """Merge a run's derived limits (`measured`, validate's time_limits.jsonl) into the pinned
    file: a problem's row replaces its old pin. Returns (pins written, of which new or changed)."""
    old = {}
    if pinned.exists():
        old = {json.loads(line)["id"]: json.loads(line) for line in pinned.read_text().splitlines() if line.strip()}
    rows, changed = dict(old), 0
    for line in measured.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        was = old.get(row["id"], {})
        if (was.get("key"), was.get("final_s")) != (row["key"], row["final_s"]):  # (a pin that held stays as it was)
            rows[row["id"]] = {k: row[k] for k in ("id", "key", "final_s", "capped", "slowest_reference_s")}
            changed += 1
    write_rows(list(rows.values()), pinned)
    return len(rows), changed

"""Limits a statement states in its text ("Time limit: 20 seconds per test set.", "Memory limit:
1 GB."), as Code Jam / Kick Start pages do, possibly per test set under headings such as "Test Set 1
(Visible Verdict)" or "Small dataset (Test set 1 - Visible)".

`stated_limits(text)` reads a statement page (HTML) or its Markdown and returns what it could parse:

    {"time_limit_s": 20.0 | {"Test Set 1": 20.0, "Test Set 2": 40.0},
     "time_limit_per_run_s": 10.0,        # interactive pages: "(10 seconds per test run.)"
     "memory_limit_mb": 1024}

A key is left out when the text does not state it or states it in a way this cannot read (for
instance a test set with no time limit of its own and no page-wide one to fall back on).
"""

from __future__ import annotations

import re
from typing import Any

from microcoder.pipeline.sources.normalize import html_to_markdown

_NUMBER = r"(\d+(?:\.\d+)?)"
_TIME = re.compile(
    rf"\btime\s+limit\s*:\s*{_NUMBER}\s*(milliseconds?|ms|seconds?|secs?|s|minutes?|mins?)\b"
    rf"(?:[^.\n]*\.?\s*\(\s*{_NUMBER}\s*(milliseconds?|ms|seconds?|secs?|s)\s+per\s+test\s+run)?",
    re.IGNORECASE,
)
_MEMORY = re.compile(rf"\bmemory\s+limit\s*:\s*{_NUMBER}\s*([KMG])i?B?\b", re.IGNORECASE)
_HEADING = re.compile(r"^\s*#{1,6}\s+(.*?)\s*#*\s*$")
_TEST_SET = re.compile(r"\btest\s*set\s*(\d+)", re.IGNORECASE)
_DATASET = re.compile(r"^(small|large)\s+(?:data\s*set|input)(?:\s+(\d+))?\b", re.IGNORECASE)
_HTML = re.compile(r"<(?:html|body|div|p|h[1-6]|br)\b", re.IGNORECASE)

_SECONDS = {"ms": 0.001, "millisecond": 0.001, "s": 1.0, "sec": 1.0, "second": 1.0, "min": 60.0, "minute": 60.0}
_MEGABYTES = {"k": 1 / 1024, "m": 1, "g": 1024}


def stated_limits(text: str) -> dict[str, Any]:
    """The time and memory limits stated in a statement (HTML page or Markdown); see module doc."""
    if _HTML.search(text):
        text = html_to_markdown(text)
    page: dict[str, list[float]] = {"time": [], "run": [], "memory": []}
    per_set: dict[str, dict[str, list[float]]] = {}
    current = page
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            name = named_test_set(heading.group(1))
            current = per_set.setdefault(name, {"time": [], "run": [], "memory": []}) if name else page
            continue
        for m in _TIME.finditer(line):
            current["time"].append(_seconds(m.group(1), m.group(2)))
            if m.group(3):
                current["run"].append(_seconds(m.group(3), m.group(4)))
        for m in _MEMORY.finditer(line):
            current["memory"].append(float(m.group(1)) * _MEGABYTES[m.group(2).lower()])
    out: dict[str, Any] = {}
    for kind, key in (("time", "time_limit_s"), ("run", "time_limit_per_run_s"), ("memory", "memory_limit_mb")):
        value = _resolve([v for v in page[kind]], {name: limits[kind] for name, limits in per_set.items()})
        if value is not None:
            out[key] = _memory_value(value) if kind == "memory" else value
    return out


def named_test_set(heading: str) -> str | None:
    """"Test Set N" for a heading naming a test set ("Test set 1 - Visible", "Large dataset (Test
    Set 2 - Hidden)"), "Small dataset"/"Large dataset" for old pages that number none, else None.
    Sample headings ("Additional Sample - Test Set 2") name no test set."""
    if "sample" in heading.lower():
        return None
    m = _TEST_SET.search(heading)
    if m:
        return f"Test Set {int(m.group(1))}"
    m = _DATASET.match(heading.strip())
    if m:
        return " ".join(part for part in (f"{m.group(1).capitalize()} dataset", m.group(2)) if part)
    return None


def _seconds(number: str, unit: str) -> float:
    unit = unit.lower()
    unit = unit if unit in ("ms", "s") else unit.rstrip("s")
    return round(float(number) * _SECONDS[unit], 6)


def _resolve(page: list[float], sets: dict[str, list[float]]) -> float | dict[str, float] | None:
    """One number when every test set has the same limit, a per-set mapping when they differ,
    None when the text contradicts itself or leaves a test set without a limit."""
    if len(set(page)) > 1 or any(len(set(values)) > 1 for values in sets.values()):
        return None
    fallback = page[0] if page else None
    if not any(sets.values()):
        return fallback
    resolved = {name: values[0] if values else fallback for name, values in sets.items()}
    if any(value is None for value in resolved.values()):
        return None
    values = set(resolved.values())
    return values.pop() if len(values) == 1 and (fallback is None or fallback in values) else resolved


def _memory_value(value: float | dict[str, float]) -> int | float | dict[str, int | float]:
    if isinstance(value, dict):
        return {name: _whole(v) for name, v in value.items()}
    return _whole(value)


def _whole(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value

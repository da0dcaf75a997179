"""Validate's report: report.parquet's rows (one per test and program run) and stats.json's figures
(the problems' validation records added up, and what validation cost the judges). The rules that
make the records are pipeline/validate.py's; this module only reads them, so a report change never
changes a verdict. `c` below is a `microcoder.pipeline.validate.Case` (a problem's way through the steps:
its runs, their statuses, its tests' classes)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from microcoder.pipeline import strength
from microcoder.pipeline.evaluator.programs import at_limit, test_hash
from microcoder.pipeline.schema import Problem

_OUTPUT_KEEP = 400  # characters of actual / expected output kept in the report


def judge_seconds(c: Any) -> dict[str, float]:
    """The measured times of the problem's runs (CPU seconds, cached runs included; presumed runs
    never ran) by role: what validating it costs the judges, one run after another."""
    def total(runs: dict[int, dict[str, Any]]) -> float:
        return sum(r.get("time_s") or 0.0 for r in runs.values() if not r.get("presumed"))

    return {"reference": sum(map(total, c.ref_runs.values())),
            "wrong": sum(map(total, c.wrong_runs.values())) + sum(map(total, c.held_out_runs.values()))}


def reference_run_figures(cases: list[Any], limit_tests) -> dict[str, Any]:
    """stats.json's `reference_runs`: who ran what (validate's `vote_references`; the runs executed /
    cached / presumed per role are this_run's, as they depend on the cache): the references that
    voted and those that did not, the non-voters' runs (`runs`) and those skipped by reason
    (per reference and test it never ran: `limit_known`: a largest test, not timed because the limit
    was stated, pinned or at its ceiling from the voters' times; `after_first_failure`: a kept test
    after its first failure there; `settled_by_voters`: any other, which the voters settled), and
    the judge seconds by role (measured, cached runs included)."""
    skipped = {"settled_by_voters": 0, "limit_known": 0, "after_first_failure": 0}
    ran = 0
    seconds = {"voters": 0.0, "non_voters": 0.0, "wrong": 0.0}
    problems = 0
    for c in cases:
        problems += bool(c.voted)
        timing = set(limit_tests(c.p)) if c.voted and c.limit_known else set()
        for (ri, run), runs in c.ref_runs.items():
            seconds["non_voters" if ri in c.voted else "voters"] += sum(
                r.get("time_s") or 0.0 for r in runs.values() if not r.get("presumed"))
            if ri not in c.voted or run:
                continue
            ran += len(runs)
            for ti in range(len(c.p.tests)):
                if ti in runs:
                    continue
                why = ("limit_known" if ti in timing else
                       "after_first_failure" if ti in c.strength_tests.get(ri, ()) else "settled_by_voters")
                skipped[why] += 1
        seconds["wrong"] += judge_seconds(c)["wrong"]
    return {"problems_with_non_voters": problems,
            "references_voting": sum(len(c.p.reference_solutions) - len(c.voted) for c in cases),
            "references_not_voting": sum(len(c.voted) for c in cases),
            "non_voters_runs": ran, "non_voters_skipped": skipped,
            "judge_s": {k: round(v, 2) for k, v in seconds.items()}}


def report_schema():
    """report.parquet's columns (typed, so that a report without rows still has them)."""
    import pyarrow as pa

    text, flag = pa.string(), pa.bool_()
    return pa.schema([("problem_id", text), ("test_index", pa.int64()), ("test_hash", text), ("test_kind", text),
                      ("test_group", text), ("role", text), ("reference_index", pa.int64()), ("language", text),
                      ("label", text),
                      ("reference_status", text), ("status", text), ("run_status", text), ("presumed", flag),
                      ("time_s", pa.float64()), ("test_class", text), ("slow", flag), ("kept", flag),
                      ("expected", text), ("actual", text), ("message", text)])


def report_rows(c: Any, kept: set[int]) -> list[dict[str, Any]]:
    """One row per (test, program) that ran or was presumed: references first, then wrong solutions."""
    p, eff = c.p, c.judged_limit_s
    rows = []
    programs = [("reference", ri, ref.language, None, c.ref_status.get(ri, "missing"), c.ref_runs.get((ri, 0), {}))
                for ri, ref in enumerate(p.reference_solutions)]
    programs += [("wrong", wi, p.wrong_solutions[wi].language, p.wrong_solutions[wi].label, c.wrong_status[wi], runs)
                 for wi, runs in sorted(c.wrong_runs.items())]
    for ti, t in enumerate(p.tests):
        for role, idx, language, label, status, runs in programs:
            r = runs.get(ti)
            if r is None:
                continue
            rows.append({
                "problem_id": p.id, "test_index": ti, "test_hash": test_hash(t), "test_kind": t.kind,
                "test_group": t.group, "role": role, "reference_index": idx, "language": language,
                "label": label,
                "reference_status": status, "status": at_limit(r, eff) if role == "reference" else r["status"],
                "run_status": r["status"], "presumed": bool(r.get("presumed")),
                "time_s": float(r.get("time_s") or 0.0), "test_class": c.classes[ti], "slow": c.slow[ti],
                "kept": ti in kept, "expected": t.output[:_OUTPUT_KEEP],
                "actual": None if r.get("output") is None else str(r["output"])[:_OUTPUT_KEEP],
                "message": None if r.get("diff") is None else str(r["diff"])[:_OUTPUT_KEEP],
            })
    return rows




# Per-problem figures that summarise adds up (validation record keys).
_COUNTS = ("tests_in", "tests_valid", "tests_broken", "tests_ambiguous", "tests_nondeterministic", "tests_unverified",
           "tests_unverified_slow", "tests_oversize", "tests_capped", "tests_kept", "references_total",
           "references_ok", "references_failed_to_run")
_WRONG = ("wrong_total", "wrong_ran", "wrong_caught_by_candidates", "wrong_caught", "wrong_lost_to_caps")


def summarise(validations: list[tuple[Problem, dict[str, Any], bool]],
              aside: list[tuple[Problem, str, str]]) -> dict[str, Any]:
    """stats.json's figures: the problems' validation records added up (one row per problem run:
    the problem as judged, its validation record, whether it was kept)."""
    import polars as pl

    def row(v: dict[str, Any], kept: bool) -> dict[str, Any]:
        lim = v["time_limit"]
        return {**{k: v[k] for k in _COUNTS + _WRONG}, "kept": kept,
                "references_too_slow_runs": sum(v["references_too_slow"]),
                "references_too_slow_somewhere": sum(n > 0 for n in v["references_too_slow"]),
                "limit": "stated" if lim["stated"] else ("derived" if lim["derived"] else "not_stated_kept_default"),
                "raised_above_stated": bool(lim["stated"] and lim["final_s"] > lim["source_s"]),
                "capped": bool(lim.get("capped")),
                "problem_multipliers": bool(lim["derived"]) and lim.get("multipliers_from", "").startswith("problem")}

    schema = {**dict.fromkeys(_COUNTS + _WRONG + ("references_too_slow_runs", "references_too_slow_somewhere"), pl.Int64),
              "kept": pl.Boolean, "limit": pl.String, "raised_above_stated": pl.Boolean, "capped": pl.Boolean,
              "problem_multipliers": pl.Boolean}
    df = pl.DataFrame([row(v, kept) for _p, v, kept in validations], schema=schema)
    totals = df.select(pl.col(pl.Int64).sum()).row(0, named=True)
    for key in ("interactive", "multiple_answers"):  # problems rejected unrun: their tests count in
        n = sum(len(p.tests) for p, _reason, k in aside if k == key)
        totals["tests_in"] += n
        totals[f"tests_{key}"] = n
    limits = dict(df.group_by("limit").len().iter_rows())
    limits["raised_above_stated"] = int(df["raised_above_stated"].sum())
    limits["capped"] = int(df["capped"].sum())  # derived over max_time_limit_s: the ceiling is the limit
    limits["derived_with_problem_multipliers"] = int(df["problem_multipliers"].sum())
    # Known-wrong solutions of the kept problems: how many the kept tests catch (of those that ran).
    kept_wrong = df.filter(pl.col("kept") & (pl.col("wrong_total") > 0))
    wrong = {"problems_with_wrong_solutions": len(kept_wrong),
             **{k.removeprefix("wrong_"): int(kept_wrong[k].sum()) for k in _WRONG}}
    wrong["share_caught"] = round(wrong["caught"] / wrong["ran"], 4) if wrong["ran"] else None
    return {
        # Over all problems: tests_in = valid + broken + ambiguous + nondeterministic + unverified + unverified_slow
        # (+ interactive / multiple_answers: tests of problems rejected unrun), and
        # valid + unverified (+ unverified_slow when kept) = kept + oversize + capped. output_tests: tests in kept problems.
        "tests": {k: int(n) for k, n in sorted(totals.items()) if k.startswith("tests_")},
        "output_tests": int(df.filter(pl.col("kept"))["tests_kept"].sum()),
        "references": {k: int(n) for k, n in sorted(totals.items()) if k.startswith("references_")},
        "time_limits": dict(sorted(limits.items())),
        "wrong_solutions": wrong,
        "strength": strength_figures([(p, v) for p, v, kept in validations if kept]),
        "test_groups": group_figures([v for _p, v, kept in validations if kept]),
    }


def group_figures(kept: list[dict[str, Any]]) -> dict[str, int]:
    """Test groups of the kept problems (validation records): how many, and how many validation left
    without a test (a subtask the kept tests no longer exercise; each problem's `groups_emptied`)."""
    grouped = [v for v in kept if v.get("test_groups")]
    return {"problems_grouped": len(grouped), "groups": sum(len(v["test_groups"]) for v in grouped),
            "groups_emptied": sum(len(v["groups_emptied"]) for v in grouped),
            "problems_with_a_group_emptied": sum(bool(v["groups_emptied"]) for v in grouped)}


def judge_time_figures(per_problem: list[dict[str, float]]) -> dict[str, Any]:
    """What validation cost the judges (`judge_seconds` of every problem run, kept or rejected):
    the total, the share spent on known-wrong solutions, and the spread over problems."""
    ref, wrong = (sum(s[role] for s in per_problem) for role in ("reference", "wrong"))
    times = sorted(s["reference"] + s["wrong"] for s in per_problem)

    def rank(q: float) -> float | None:  # nearest-rank percentile
        return round(times[max(0, math.ceil(q * len(times)) - 1)], 2) if times else None

    return {"problems": len(times), "total_s": round(ref + wrong, 2), "reference_s": round(ref, 2),
            "wrong_s": round(wrong, 2), "wrong_share": round(wrong / (ref + wrong), 4) if ref + wrong else None,
            "per_problem_median_s": rank(0.5), "per_problem_p90_s": rank(0.9), "per_problem_max_s": rank(1.0)}


def strength_figures(kept: list[tuple[Problem, dict[str, Any]]]) -> dict[str, Any]:
    """TPR/TNR over the kept problems (counts summed, never ratios averaged): of the kept tests, of
    every candidate test (`before_caps`: the difference is what max_tests / max_total_bytes cost), and
    of the kept tests per source and per difficulty (the groups add up to `kept`). `held_out` and
    `held_out_before_caps` are the same on solutions that had no part in the choice (validate_heldout.py),
    with `held_out_by_source` / `held_out_by_difficulty`; `problems_without_held_out_tpr` counts the
    kept problems whose references could not be held out, by why (one reference: no held-out TPR,
    never 100%)."""
    held = [(p, v.get("strength_held_out") or strength.record()) for p, v in kept]  # none before issue 36
    no_tpr = Counter(why for _p, v in kept if (why := (v.get("held_out") or {}).get("no_tpr")))
    return {"kept": strength.add(v["strength"] for _p, v in kept),
            "before_caps": strength.add(v["strength_before_caps"] for _p, v in kept),
            "held_out": strength.add(r for _p, r in held),
            "held_out_before_caps": strength.add(v.get("strength_held_out_before_caps") for _p, v in kept),
            "by_source": strength.by_group((p.source, v["strength"]) for p, v in kept),
            "by_difficulty": strength.by_group((p.difficulty, v["strength"]) for p, v in kept),
            "held_out_by_source": strength.by_group((p.source, r) for p, r in held),
            "held_out_by_difficulty": strength.by_group((p.difficulty, r) for p, r in held),
            "problems_measured": sum(bool(v["strength"]["correct"] or v["strength"]["incorrect"]) for _p, v in kept),
            "problems_measured_held_out": sum(bool(r["correct"] or r["incorrect"]) for _p, r in held),
            "problems_without_held_out_tpr": dict(sorted(no_tpr.items()))}

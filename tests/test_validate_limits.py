"""Time limits as the package states them, and bounded; known-wrong solutions that stop early
(issue 27 item 3): a Kattis package's own time multipliers, `max_time_limit_s` with `capped`,
known-wrong solutions stopping at their first failure (a `time_limit_exceeded` one at its first
test over the limit, largest input first), the wrong solutions the caps lost rerun on the kept
tests, and what validation cost the judges in stats.json. No assertion depends on machine speed:
limits are checked against the rule applied to the recorded times, and runs are counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase, WrongSolution
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import Reject, SourceContext
from microcoder.pipeline.validate import (
    ValidateConfig,
    max_time_limit,
    run_limit,
    time_multipliers,
    validate_problems,
)

SUM = "a, b = map(int, input().split())\nprint(a + b)\n"
# Correct, ~0.1-0.5 s of CPU per test: a measurable slowest run.
BUSY_SUM = "a, b = map(int, input().split())\nx = 0\nfor i in range(3_000_000):\n    x += i\nprint(a + b)\n"
# Correct, but never finishes an input with a > 1000.
SLOW_SUM = "a, b = map(int, input().split())\nwhile a > 1000:\n    pass\nprint(a + b)\n"
WRONG_EVERYWHERE = "print(0)\n"

EV = EvaluatorConfig(workers=2)


def case(a: int, b: int, kind: str = "private") -> TestCase:
    return TestCase(f"{a} {b}\n", f"{a + b}\n", kind)


def problem(pid: str, tests, refs, wrong=(), **kw) -> Problem:
    return Problem(id=pid, source="t", statement="Print a + b.", style="stdio", tests=list(tests),
                   reference_solutions=[ReferenceSolution("python", r) for r in refs],
                   wrong_solutions=[WrongSolution("python", w, label) for w, label in wrong], **kw)


def wrong_rows(res, pid: str, index: int) -> list[dict]:
    return [r for r in res.report if r["problem_id"] == pid and r["role"] == "wrong" and r["reference_index"] == index]


@pytest.fixture
def cfg(tmp_path):
    return ValidateConfig(min_tests=1, cache_path=str(tmp_path / "cache.sqlite"))


# --- a Kattis package's own multipliers -------------------------------------------------------------------------
def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def kattis_package(folder: Path, limits: str, version: str | None = None) -> Path:
    """A legacy (or `version`) package without a time limit: the limit is derived from its accepted
    submission, which is slow enough to be measured."""
    header = f"problem_format_version: {version}\n" if version else ""
    write(folder / "problem.yaml", f"{header}source: Made-up Contest\nlicense: cc by\n{limits}")
    write(folder / "problem_statement" / "problem.en.md", "Read two integers and print their sum.\n")
    for group, name, (a, b) in (("sample", "1", (1, 2)), ("secret", "2", (10, 20)), ("secret", "3", (5, 6))):
        write(folder / "data" / group / f"{name}.in", f"{a} {b}\n")
        write(folder / "data" / group / f"{name}.ans", f"{a + b}\n")
    write(folder / "submissions" / "accepted" / "busy.py", BUSY_SUM)
    return folder


def read_packages(path: Path) -> list[Problem | Reject]:
    return list(read_source("kattis", build_options("kattis", {"path": str(path)}), SourceContext("kattis")))


def test_a_packages_time_multiplier_derives_its_limit(tmp_path, cfg):
    (p,) = read_packages(kattis_package(tmp_path / "two", "limits:\n  time_multiplier: 2\n"))
    assert p.meta["time_limit_stated"] is False
    assert p.meta["time_multipliers"] == {"ac_to_time_limit": 2.0, "time_limit_to_tle": 2.0}
    res = validate_problems([p], cfg, evaluator=EV, progress=False)
    lim = res.kept[0].extra["validation"]["time_limit"]
    # the package's 2, not validate's 5; the safety margin is the legacy format's default
    assert (lim["multiplier"], lim["safety_margin"]) == (2.0, 2.0)
    assert lim["multipliers_from"] == "problem: limits.time_multiplier, legacy format default for time_limit_to_tle"
    (timing,) = res.time_limits
    assert lim["final_s"] == timing["derived_s"] == max(1.0, float(int(0.5 + 2 * timing["slowest_reference_s"])))
    assert res.stats.as_dict()["time_limits"]["derived_with_problem_multipliers"] == 1


def test_the_package_formats_keys_and_defaults(tmp_path):
    kattis_package(tmp_path / "new", "limits:\n  time_multipliers:\n    ac_to_time_limit: 3\n", "2023-07")
    kattis_package(tmp_path / "bare-new", "", "2025-09")
    kattis_package(tmp_path / "bare-legacy", "")
    kattis_package(tmp_path / "bad", "limits:\n  time_multiplier: fast\n")
    items = {i.id.removeprefix("kattis/"): i for i in read_packages(tmp_path)}
    assert items["new"].meta["time_multipliers"] == {"ac_to_time_limit": 3.0, "time_limit_to_tle": 1.5}
    assert items["new"].meta["time_multipliers_from"] == \
        "limits.time_multipliers.ac_to_time_limit, 2023-07 format default for time_limit_to_tle"
    # a package of a format since 2023-07 that states none gets its format's defaults (2.0 and 1.5)
    assert items["bare-new"].meta["time_multipliers"] == {"ac_to_time_limit": 2.0, "time_limit_to_tle": 1.5}
    assert items["bare-new"].meta["time_multipliers_from"] == \
        "2025-09 format default for ac_to_time_limit, 2025-09 format default for time_limit_to_tle"
    # a legacy one that states none: nothing recorded, validate's settings (the legacy defaults) apply
    assert "time_multipliers" not in items["bare-legacy"].meta
    cfg = ValidateConfig()
    assert time_multipliers(items["bare-legacy"], cfg).source == "validate.time_multiplier"
    assert time_multipliers(items["new"], cfg).ac_to_time_limit == 3.0
    assert isinstance(items["bad"], Reject) and items["bad"].code == "bad_package"
    assert "limits.time_multiplier: expected a positive number, got 'fast'" in items["bad"].detail


def test_unusable_multipliers_in_meta_fall_back_and_say_so():
    p = problem("t/odd", [case(1, 2)], [SUM], meta={"time_multipliers": {"ac_to_time_limit": -1}})
    m = time_multipliers(p, ValidateConfig())
    assert (m.ac_to_time_limit, m.time_limit_to_tle) == (5.0, 2.0)
    assert m.source.startswith("validate.time_multiplier (the problem's time_multipliers") and "not positive" in m.source


# --- the ceiling --------------------------------------------------------------------------------------------------
def test_the_ceiling_comes_from_the_setting_else_the_platform():
    unstated = {"time_limit_stated": False}
    cf = problem("t/cf", [case(1, 2)], [SUM], platform="codeforces", meta=unstated)
    lc = problem("t/lc", [case(1, 2)], [SUM], platform="leetcode", meta=unstated)
    other = problem("t/x", [case(1, 2)], [SUM], platform="somewhere", meta=unstated)
    defaults = ValidateConfig()
    assert max_time_limit(cf, defaults) == (15.0, "platform codeforces")
    assert max_time_limit(lc, defaults) == (10.0, "platform leetcode")
    assert max_time_limit(other, defaults) == (15.0, "default (platform without its own)")
    assert max_time_limit(lc, ValidateConfig(max_time_limit_s=4)) == (4.0, "validate.max_time_limit_s")
    # references probing for a limit stop at the ceiling: a run over it is too slow under any derived limit
    assert run_limit(lc, ValidateConfig(probe_time_limit_s=30)) == 10.0
    assert run_limit(problem("t/stated", [case(1, 2)], [SUM], time_limit_s=20.0), defaults) == 20.0  # stated: the source's
    with pytest.raises(ValueError, match="max_time_limit_s"):
        ValidateConfig(max_time_limit_s=0.5)  # below min_time_limit_s


def test_a_slow_reference_gets_a_capped_limit_and_is_too_slow_over_it(cfg):
    """x50 of a ~0.1 s reference is several seconds; the ceiling of 1 s binds. A second reference
    that never finishes the large input runs there only up to the ceiling (not the 10 s probe) and
    is too slow there: it lowers TPR."""
    tests = [case(1, 2, "public"), case(3, 4), case(10**4, 5)]
    p = problem("t/capped", tests, [BUSY_SUM, SLOW_SUM], meta={"time_limit_stated": False})
    capped = ValidateConfig(min_tests=1, cache_path=cfg.cache_path, time_multiplier=50.0, max_time_limit_s=1.0)
    res = validate_problems([p], capped, evaluator=EV, progress=False)
    (out,) = res.kept
    v = out.extra["validation"]
    lim = v["time_limit"]
    (timing,) = res.time_limits
    assert timing["derived_s"] == max(1.0, float(int(0.5 + 50 * timing["slowest_reference_s"]))) > 1.0
    assert (lim["capped"], lim["max_s"], lim["max_from"], lim["final_s"], lim["run_s"]) == \
        (True, 1.0, "validate.max_time_limit_s", 1.0, 1.0)
    assert "at most 1 s" in lim["rule"] and out.time_limit_s == 1.0
    assert v["references_too_slow"][1] == 1 and v["strength"]["correct_passing"] < v["strength"]["correct"]
    assert res.stats.as_dict()["time_limits"]["capped"] == 1


def test_a_stated_limit_is_never_capped():
    """derive_time_limit: all, made-up runs (no evaluator): a stated 20 s stays 20 s above a 15 s
    ceiling; the rule's 25 s is bound by it (capped), a rule's 10 s is not."""
    from microcoder.pipeline.validate import Case, settle_time_limit

    every = ValidateConfig(derive_time_limit="all", max_time_limit_s=15.0)

    def settle(slowest_s: float, stated_s: float) -> dict:
        c = Case(problem("t/stated", [case(1, 2)], [SUM], time_limit_s=stated_s))
        c.ref_status, c.ref_runs = {0: "ok"}, {(0, 0): {0: {"status": "AC", "time_s": slowest_s}}}
        settle_time_limit(c, every)
        return {**c.limit, "derived_s": c.timing["derived_s"]}  # (the measured rule's value: beside the record)

    assert {k: settle(5.0, 20.0)[k] for k in ("derived_s", "final_s", "capped")} == \
        {"derived_s": 25.0, "final_s": 20.0, "capped": True}
    assert {k: settle(2.0, 20.0)[k] for k in ("derived_s", "final_s", "capped")} == \
        {"derived_s": 10.0, "final_s": 20.0, "capped": False}
    assert {k: settle(5.0, 2.0)[k] for k in ("derived_s", "final_s", "capped")} == \
        {"derived_s": 25.0, "final_s": 15.0, "capped": True}


# --- known-wrong solutions stop early -----------------------------------------------------------------------------
def test_wrong_solutions_stop_at_their_first_failure_even_where_the_caps_choose(cfg):
    """9 candidates, max_tests 3: the caps choose. A solution wrong everywhere runs once (it ran on
    all 9 before); a time_limit_exceeded one runs largest input first and stops at its first TLE."""
    tests = [case(i, i + 1) for i in range(8)] + [case(10**4, 1)]
    p = problem("t/stop", tests, [SUM], wrong=[(WRONG_EVERYWHERE, "wrong_answer"), (SLOW_SUM, "time_limit_exceeded")],
                time_limit_s=0.5)
    three = ValidateConfig(min_tests=1, max_tests=3, cache_path=cfg.cache_path)
    res = validate_problems([p], three, evaluator=EV, progress=False)
    v = res.kept[0].extra["validation"]
    assert [len(wrong_rows(res, "t/stop", i)) for i in range(2)] == [1, 1]
    (tle,) = wrong_rows(res, "t/stop", 1)
    assert (tle["test_index"], tle["status"]) == (8, "TLE")  # the largest input, first
    assert (v["wrong_ran"], v["wrong_caught"], v["wrong_lost_to_caps"]) == (2, 2, 0)


def test_a_wrong_solution_the_caps_lost_is_run_on_the_kept_tests(cfg):
    """One test kept (max_tests 1), two wrong solutions: A is first caught by the smallest test,
    B only by the largest, which the cover keeps (ties go to the larger input). A also fails the
    largest, which it never ran: it is run there, and the kept test is seen to catch both."""
    tests = [case(0, 1), case(5, 55), case(123456789, 7)]
    wrong_a = "a, b = map(int, input().split())\nprint(a + b + (a == 0 or a > 10**8))\n"
    wrong_b = "a, b = map(int, input().split())\nprint(a + b + (a > 10**8))\n"
    p = problem("t/lost", tests, [SUM], wrong=[(wrong_a, "wrong_answer"), (wrong_b, "wrong_answer")])
    one = ValidateConfig(min_tests=1, max_tests=1, cache_path=cfg.cache_path)
    res = validate_problems([p], one, evaluator=EV, progress=False)
    (out,) = res.kept
    v = out.extra["validation"]
    assert [t.input for t in out.tests] == ["123456789 7\n"]
    assert sorted(r["test_index"] for r in wrong_rows(res, "t/lost", 0)) == [0, 2]  # its first catch, then the kept
    assert (v["wrong_caught_by_candidates"], v["wrong_caught"], v["wrong_lost_to_caps"]) == (2, 2, 0)
    assert v["strength"]["tnr"] == 1.0


# --- what it cost -------------------------------------------------------------------------------------------------
def test_stats_say_what_validation_cost_and_the_share_of_known_wrong_solutions(cfg):
    tests = [case(i, i + 1) for i in range(4)]
    busy_wrong = BUSY_SUM.replace("print(a + b)", "print(a + b + 1)")  # measurably more than nothing
    a = problem("t/a", tests, [SUM], wrong=[(busy_wrong, "wrong_answer")])
    b = problem("t/b", tests, [SUM, SUM.replace("a + b", "b + a")])
    res = validate_problems([a, b], cfg, evaluator=EV, progress=False)
    j = res.stats.as_dict()["judge_time"]
    by_role = {role: sum(r["time_s"] for r in res.report if r["role"] == role and not r["presumed"])
               for role in ("reference", "wrong")}
    assert j["problems"] == 2
    assert j["reference_s"] == pytest.approx(by_role["reference"], abs=0.01)
    assert j["wrong_s"] == pytest.approx(by_role["wrong"], abs=0.01) and j["wrong_s"] > 0
    assert j["wrong_share"] == pytest.approx(by_role["wrong"] / (by_role["reference"] + by_role["wrong"]), abs=1e-3)
    assert j["per_problem_median_s"] <= j["per_problem_p90_s"] <= j["per_problem_max_s"]
    assert j["per_problem_max_s"] == pytest.approx(max(
        sum(r["time_s"] for r in res.report if r["problem_id"] == pid) for pid in ("t/a", "t/b")), abs=0.02)


# --- a derived limit pinned: rows that do not move with the machine's speed (issue 37) ---------------------------
def test_a_pinned_limit_holds_on_a_machine_twice_as_slow_and_without_the_pin_it_moves(tmp_path, cfg):
    """The knob `evaluator.slowdown` makes a slower machine by construction (contention does not:
    CPU time is the same). Without a pin the derived limit moves with it (4x, so that it surely
    crosses a whole second); with the limits a run pinned (`microcoder pin-limits`), the rows are
    the same on this machine and on one twice as slow, though each would derive its own limit;
    changing a reference unpins it. The pin is made on the machine 4x slower, so that the machines
    measured against it are faster than the one that pinned: a reference then runs at a tenth of
    its limit or less. (Pinned here, with the limit rounded down to the 1 s floor, the reference
    sat at 0.6 of the limit twice as slow, and CI's timing noise crossed it.)"""
    from microcoder.pipeline.pinned_limits import pin, write_rows

    tests = [case(1, 2, "public"), case(3, 4), case(5, 6)]
    p = problem("t/pin", tests, [BUSY_SUM], meta={"time_limit_stated": False})
    here = validate_problems([p], cfg, evaluator=EV, progress=False)
    slower = EvaluatorConfig(workers=2, slowdown=4.0)
    unpinned = validate_problems([p], cfg, evaluator=slower, progress=False)
    limit = unpinned.kept[0].time_limit_s
    assert limit > here.kept[0].time_limit_s  # the check can fail

    measured, pins = tmp_path / "time_limits.jsonl", tmp_path / "pins.jsonl"
    write_rows(unpinned.time_limits, measured)
    assert pin(measured, pins) == (1, 1) and pin(measured, pins) == (1, 0)  # a pin that holds stays
    pinned_cfg = ValidateConfig(min_tests=1, cache_path=cfg.cache_path, pinned_limits=str(pins))
    fast = validate_problems([p], pinned_cfg, evaluator=EV, progress=False)
    slow = validate_problems([p], pinned_cfg, evaluator=EvaluatorConfig(workers=2, slowdown=2.0), progress=False)
    assert fast.kept == slow.kept  # the same rows, whatever the speed
    assert fast.kept[0].time_limit_s == limit and fast.kept[0].extra["validation"]["strength"]["tpr"] == 1.0
    assert fast.time_limits[0]["pinned"] and fast.time_limits[0]["derived_s"] != limit  # unpinned, it would move
    assert slow.time_limits[0]["slowest_reference_s"] > fast.time_limits[0]["slowest_reference_s"]  # metadata only

    changed = problem("t/pin", tests, [BUSY_SUM + "# another reference\n"], meta={"time_limit_stated": False})
    rederived = validate_problems([changed], pinned_cfg, evaluator=EV, progress=False)
    assert not rederived.time_limits[0]["pinned"]
    assert rederived.kept[0].time_limit_s < limit  # derived from this (faster) machine's times


def test_a_malformed_pin_file_is_one_clear_error(tmp_path, cfg):
    from microcoder.pipeline.stage import ConfigError

    pins = tmp_path / "pins.jsonl"
    pins.write_text('{"id": "t/pin", "final_s": 2.0}\n')
    bad = ValidateConfig(min_tests=1, cache_path=cfg.cache_path, pinned_limits=str(pins))
    p = problem("t/pin", [case(1, 2), case(3, 4)], [SUM], meta={"time_limit_stated": False})
    with pytest.raises(ConfigError, match="pins.jsonl:1: not a pinned time limit"):
        validate_problems([p], bad, evaluator=EV, progress=False)

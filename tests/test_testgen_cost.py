"""What testgen no longer spends (issue 39: testgen was half of the real-sources run): the
references run only on as many candidates as are still missing, round after round, with the same
kept tests as running them on all; a voting reference is not judged again on generated tests
that hold its own outputs; constraint lines that are not arithmetic are not bounds (they were
re-tried on every row of every draw); random trees keep a row order the statement or the
examples give (nearly every draw broke it and was redrawn)."""

from __future__ import annotations

from collections import Counter

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.evaluator.factory import make_evaluator
from microcoder.pipeline.testgen import runner, search
from microcoder.pipeline.testgen import stage as stage_mod
from microcoder.pipeline.testgen.constraints import KeyMap, arithmetic, constraint_lines, parse_constraints
from microcoder.pipeline.testgen.functional import generate_inputs
from microcoder.pipeline.testgen.space import Space, parse_input
from microcoder.pipeline.testgen.stage import testgen_problems
from microcoder.pipeline.testgen.types import Signature, Type
from tests.test_testgen_stage import CRASHY, REFERENCE, cfg, functional

EV = EvaluatorConfig(workers=1)
INT = Type("int")
GRID = Type("list", Type("list", INT))


def _counting(monkeypatch) -> Counter:
    """Inputs each reference_outputs call ran references on, and generated-suite judgings per role."""
    seen: Counter = Counter()
    real_outputs, real_judge = runner.reference_outputs, search.judge

    def outputs(ev, items, *a):
        seen["reference inputs"] += sum(len(inputs) for _, _, inputs in items)
        seen["reference rounds"] += 1
        return real_outputs(ev, items, *a)

    def judge(ev, problems, subs):
        for sid, _pid, _lang, code in subs:
            if "#gen#" in sid:
                seen["reference judged on generated" if code in (REFERENCE, CRASHY) else "other judged on generated"] += 1
        return real_judge(ev, problems, subs)

    monkeypatch.setattr(stage_mod, "reference_outputs", outputs)
    monkeypatch.setattr(search, "judge", judge)
    return seen


def test_references_run_only_on_the_candidates_still_needed(tmp_path, monkeypatch):
    seen = _counting(monkeypatch)
    c = cfg(tmp_path, mutants=0, search_rounds=0, target_tests=9)  # need 8, 14 candidates (overgenerate 1.5)
    result = testgen_problems([functional("good", REFERENCE)], c, evaluator=EV, progress=False)
    rep = result.report[0]
    assert rep["candidates"] == 14 and rep["tests_added"] == 8
    assert seen["reference inputs"] == 8 and seen["reference rounds"] == 1  # every one ran: no second round
    assert rep["dropped"] == {"surplus": 6}  # never run


def test_a_crashing_reference_takes_more_rounds_and_keeps_the_same_tests(tmp_path, monkeypatch):
    """The first `need` candidates the references agree on, in order: what running every candidate at
    once and dropping the surplus kept."""
    seen = _counting(monkeypatch)
    c = cfg(tmp_path, mutants=0, search_rounds=0, target_tests=9)
    lazy = testgen_problems([functional("crashy", CRASHY)], c, evaluator=EV, progress=False)
    assert seen["reference rounds"] > 1
    work = stage_mod._Work(functional("crashy", CRASHY), "k", 8)
    stage_mod._functional_candidates(work, c)
    with make_evaluator(stage_mod.judge_config(c, EV), executor="local") as ev:
        every = runner.reference_outputs(ev, [("crashy", work.problem, [x.input for x in work.candidates])],
                                         c.slow_fraction, c.max_output_bytes)["crashy"]
    eager = [x.input for x, e in zip(work.candidates, every, strict=True) if e.output is not None][:8]
    assert [t.input for t in lazy.kept[0].tests[1:]] == eager
    assert all(min(parse_input(t, 2)[0]) >= 0 for t in eager)
    rep = lazy.report[0]
    assert rep["dropped"]["reference RE"] > 0
    assert sum(rep["dropped"].values()) + rep["tests_added"] == rep["candidates"]  # every candidate accounted for


def test_a_voting_reference_is_not_judged_again_on_its_own_outputs(tmp_path, monkeypatch):
    seen = _counting(monkeypatch)
    result = testgen_problems([functional("good", REFERENCE)], cfg(tmp_path, mutants=4, search_rounds=0),
                              evaluator=EV, progress=False)
    rep = result.report[0]
    assert seen["reference judged on generated"] == 0 and seen["other judged on generated"] > 0
    assert rep["references_passing_by_vote"] == 1 and result.stats.figures["references_passing_by_vote"] == 1
    after = rep["strength"]["after"]["mutants"]
    assert after["correct"] == after["correct_passing"] == 1  # still counted, as passing


def test_a_held_out_reference_is_still_judged(tmp_path, monkeypatch):
    """Held out, a reference never voted: it is judged on every generated test (the held-out TPR)."""
    seen = _counting(monkeypatch)
    other = REFERENCE.replace("ans = -1\n", "ans = -1  # the same answer, another program\n")
    result = testgen_problems([functional("two", REFERENCE, other)], cfg(tmp_path, mutants=0, search_rounds=0,
                                                                           held_out_folds=2),
                              evaluator=EV, progress=False)
    rep = result.report[0]
    assert rep["references_passing_by_vote"] == 1
    assert seen["reference judged on generated"] + seen["other judged on generated"] == 1
    assert rep["strength"]["held_out"]["after"]["mutants"]["correct_passing"] == 1


# --- constraints that are not arithmetic ----------------------------------------------------------------
def test_a_choice_of_consecutive_values_is_a_range_and_other_non_arithmetic_lines_are_not_bounds():
    keys = KeyMap({"nums": Type("list", INT), "queries": GRID}, "")
    c = parse_constraints("Constraints:\n\nqueries[i][0] == 1 or queries[i][0] == 2\n"
                          "nums[i] == 1 or nums[i] == 5\n1 <= nums.length <= 10\n", keys)
    key = keys.key("queries[i][0]")
    assert [b.expr for b in c.lower[key]] == ["1"] and [b.expr for b in c.upper[key]] == ["2"]
    assert "nums[i] == 1 or nums[i] == 5" in c.unparsed  # not a range: nothing draws from a set
    assert not any("or" in b.expr for table in (c.lower, c.upper) for bounds in table.values() for b in bounds)
    assert arithmetic("n - 1") and arithmetic("min(a, 10 ** 5)") and not arithmetic("1 or x")
    assert not arithmetic("[[1, 2]]") and not arithmetic("sum(nums)")


def test_inline_quoted_constraints_are_lines_and_the_examples_end_the_section():
    text = ("Rotate.\n\nConstraints: `1 <= len(nums) <= 10^5`, `-10^9 <= nums[i] <= 10^9`.\n\n## Example 1\n\n"
            "Input: `nums = [1,2]`\n")
    assert constraint_lines(text) == ["1 <= len(nums) <= 10^5", "-10^9 <= nums[i] <= 10^9"]
    assert constraint_lines("Constraints:\n\n1 <= n <= 5\n\nExample 1:\nInput: n = 3\n") == ["1 <= n <= 5"]


def test_random_trees_keep_the_row_order_every_example_shows():
    statement = ("Constraints:\n\n2 <= n <= 1000\nedges.length == n - 1\nedges[i] = [ai, bi]\n0 <= ai, bi < n\n"
                 "The input is generated such that edges represents a valid tree.\n")
    examples = [[5, [[0, 1], [0, 2], [1, 3], [2, 4]]], [6, [[0, 1], [1, 2], [1, 3], [3, 4], [3, 5]]]]
    sp = Space(Signature(["n", "edges"], [INT, GRID]), statement, examples)
    assert sp.row_relations  # inferred: field 0 <= field 1 in every example's rows
    skipped: Counter = Counter()
    cands = generate_inputs(sp, "p", 30, seed=0, max_elements=2000, max_input_bytes=200_000, existing=set(),
                            skipped=skipped, tiers=("edge", "random"))
    assert len(cands) == 30 and not any("violates" in k for k in skipped)
    for c in cands:
        n, edges = parse_input(c.input, 2)
        assert len(edges) == n - 1 and all(a <= b for a, b in edges)


def test_a_parent_array_is_drawn_as_a_tree_rooted_at_node_0():
    """issue 36: `parents[0] == -1` with "binary tree": testgen drew `[-1, -1]` (no tree) and a correct
    response failed on it."""
    from microcoder.pipeline.testgen.space import is_parent_array

    statement = ("There is a binary tree rooted at 0 consisting of n nodes. You are given a 0-indexed integer array "
                 "parents representing the tree, where parents[i] is the parent of node i. Since node 0 is the root, "
                 "parents[0] == -1.\n\nConstraints:\n\nn == parents.length\n2 <= n <= 10^5\nparents[0] == -1\n"
                 "0 <= parents[i] <= n - 1 for i != 0\nparents represents a valid binary tree.\n")
    sp = Space(Signature(["parents"], [Type("list", INT)]), statement, [[[-1, 2, 0, 2, 0]], [[-1, 2, 0]]])
    assert sp.parent_arrays == {"parents": True}
    assert sp.violations([[-1, -1]]) and sp.violations([[-1, 0, 0, 0]]) and sp.violations([[-1, 2, 1]])
    assert not sp.violations([[-1, 2, 0, 2, 0]])
    skipped: Counter = Counter()
    cands = generate_inputs(sp, "p", 30, seed=0, max_elements=2000, max_input_bytes=200_000, existing=set(),
                            skipped=skipped)
    assert len(cands) >= 25
    drawn = [parse_input(c.input, 1)[0] for c in cands]
    assert all(is_parent_array(p, binary=True) for p in drawn)
    assert max(map(len, drawn)) > 1000 and min(map(len, drawn)) <= 2
    assert is_parent_array([-1, 0, 0, 0], binary=False) and not is_parent_array([-1, 0, 0, 0], binary=True)


def test_words_separated_by_single_spaces_are_drawn_so():
    """issue 36: a sentence drawn over letters and spaces had leading and double spaces, inputs the
    statement rules out."""
    statement = ("Constraints:\n\n1 <= text.length <= 10^4\ntext consists of lowercase English letters and spaces ' '.\n"
                 "text has no leading or trailing spaces.\nAll the words in text are separated by a single space.\n")
    sp = Space(Signature(["text"], [Type("str")]), statement, [["hello world"], ["a b c"]])
    assert "sentence" in sp.c.flags["val:text"]
    assert sp.violations([" ab"]) and sp.violations(["a  b"]) and sp.violations(["ab "]) and not sp.violations(["a b"])
    cands = generate_inputs(sp, "p", 30, seed=0, max_elements=2000, max_input_bytes=200_000, existing=set())
    texts = [parse_input(c.input, 1)[0] for c in cands]
    assert len(texts) >= 25 and sum(" " in t for t in texts) >= 10
    assert all(t == " ".join(t.split()) for t in texts)


def test_inputs_drawn_ahead_in_a_second_process_are_the_ones_drawn_in_line(tmp_path):
    """Several batches: the next batch's inputs are drawn in a spawned process while this one is
    judged (`_DrawAhead`; the first batch's first half there, its second half here); one batch:
    drawn in line. The same tests and records either way."""
    problems = [functional("a", REFERENCE), functional("b", CRASHY), functional("c", REFERENCE),
                functional("d", REFERENCE)]
    ahead = testgen_problems(problems, cfg(tmp_path / "1", batch_size=2, search_rounds=1), evaluator=EV, progress=False)
    inline = testgen_problems(problems, cfg(tmp_path / "2", batch_size=8, search_rounds=1), evaluator=EV, progress=False)
    assert [p.tests for p in ahead.kept] == [p.tests for p in inline.kept]
    assert _unmeasured(ahead.report) == _unmeasured(inline.report)


def _unmeasured(report: list[dict]) -> list[dict]:
    """The report without the one measured figure (the search's reference seconds)."""
    return [{**r, "search": {k: v for k, v in (r.get("search") or {}).items() if k != "reference_s"}} for r in report]


def test_an_interrupted_draw_ahead_leaves_no_process(tmp_path, monkeypatch):
    import multiprocessing

    def boom(batch, cfg, ev):
        raise KeyboardInterrupt

    monkeypatch.setattr(stage_mod, "_process_batch", boom)
    problems = [functional(p, REFERENCE) for p in "abc"]
    try:
        testgen_problems(problems, cfg(tmp_path, batch_size=1), evaluator=EV, progress=False)
    except BaseException as e:  # StageInterrupted
        assert "rerun resumes" in str(e)
    else:
        raise AssertionError("not interrupted")
    for child in multiprocessing.active_children():
        child.join(timeout=5)
    assert not multiprocessing.active_children()


def test_the_drawing_process_ends_when_testgen_is_killed(tmp_path):
    """SIGKILL gives testgen no `finally`: its spawned drawing process must notice on its own (it
    waited on its queue for good, 30 minutes and counting, before `exit_with_parent`)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import multiprocessing, os, sys\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "from microcoder.pipeline.testgen.stage import exit_with_parent\n"
        "if __name__ == '__main__':\n"
        "    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context('spawn'),\n"
        "                               initializer=exit_with_parent, initargs=(os.getpid(),))\n"
        "    print(pool.submit(os.getpid).result(), flush=True)\n"
        "    os.kill(os.getpid(), 9)\n")
    path = tmp_path / "killed.py"
    path.write_text(script)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == -signal.SIGKILL, out.stderr
    worker = int(out.stdout.split()[0])
    for _ in range(300):  # it checks once a second; a loaded machine may take longer
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(worker, signal.SIGKILL)
    raise AssertionError(f"the drawing process {worker} outlived its parent by 30 s")

"""The card's "Test strength" section and `stats --summary` line with held-out figures (issue 36):
held out first, in-sample beside, problems without a held-out TPR counted, never shown as 100%."""

from __future__ import annotations

from microcoder.pipeline.card import strength_section
from microcoder.pipeline.strength import add, record
from microcoder.pipeline.summary import strength_line

BY_SOURCE = {"kattis": record(10, 10, 8, 8), "humaneval": record(4, 4, 0, 0)}
HELD_BY_SOURCE = {"kattis": record(5, 4, 8, 7)}
VALIDATE = {"strength": {
    "kept": add(BY_SOURCE.values()), "before_caps": add(BY_SOURCE.values()),
    "held_out": add(HELD_BY_SOURCE.values()), "held_out_before_caps": record(5, 4, 8, 8),
    "by_source": BY_SOURCE, "by_difficulty": {}, "held_out_by_source": HELD_BY_SOURCE, "held_out_by_difficulty": {},
    "problems_measured": 6, "problems_measured_held_out": 2,
    "problems_without_held_out_tpr": {"one reference that ran: it cannot be held out": 4}}}


def test_the_card_states_held_out_figures_first_and_counts_problems_without_them():
    section = strength_section(VALIDATE, None)
    held = section.index("**Held out** (validate stage, over 2 kept problems")
    assert held < section.index("Kept tests (validate stage, in-sample, over its 6 kept problems")
    assert "TPR 80.0% (4/5), TNR 87.5% (7/8); on every candidate test, before the caps: TPR 80.0% (4/5), " \
           "TNR 100.0% (8/8)" in section
    assert "4 kept problems have no held-out TPR: 4 with one reference that ran" in section
    assert "| kattis | 80.0% (4/5) | 87.5% (7/8) | 100.0% (10/10) | 100.0% (8/8) |" in section
    assert "| humaneval | n/a (0) | n/a (0) | 100.0% (4/4) | n/a (0) |" in section  # no held-out figure: not 100%
    assert "says nothing by itself" in section and "CodeContests-O" in section


def test_testgen_held_out_share_and_the_search_on_it():
    testgen = {"tests_added": 9, "problems_augmented": 2, "search": {
        "held_out_survivors_at_start": 5, "held_out_killed_by_search": 1},
        "strength": {"problems": 2, "before": {"known_wrong": record(1, 1, 2, 1), "mutants": record(1, 1, 4, 2)},
                     "after": {"known_wrong": record(1, 1, 2, 2), "mutants": record(1, 1, 4, 4)},
                     "held_out": {"before": {"known_wrong": record(1, 1, 2, 0), "mutants": record(1, 1, 4, 1)},
                                  "after": {"known_wrong": record(1, 0, 2, 1), "mutants": record(1, 0, 4, 3)}}}}
    section = strength_section(None, testgen)
    line = next(x for x in section.split("\n\n") if x.startswith("Held out by the testgen stage"))
    assert "with its generated tests TPR 0.0% (0/1), TNR 50.0% (1/2)" in line
    assert "held-out mutants killed 25.0% (1/4) -> 75.0% (3/4)" in line
    assert "the search's tests failed 1 of the 5 held-out survivors" in line
    assert strength_line({"strength": testgen["strength"]}).startswith("held out: known-wrong TNR 0.0% (0/2) -> 50.0% (1/2)")


def test_the_summary_line_puts_held_out_first():
    line = strength_line(VALIDATE)
    assert line == ("held out: TPR 80.0% (4/5), TNR 87.5% (7/8); in-sample: TPR 100.0% (14/14), TNR 100.0% (8/8) "
                    "(4 problems without a held-out TPR)")
    old = {"strength": {"kept": record(2, 2, 0, 0)}}  # stats written before issue 36: as before
    assert strength_line(old) == "TPR 100.0% (2/2), TNR n/a (0)"

"""`evaluator.slowdown`: a slower machine by construction (issue 37). Contention does not make one
(CPU time is the same beside busy neighbours), so reproducibility checks scale every measured time
and divide every limit sent to a box instead."""

from __future__ import annotations

import pytest
from sandbox_fixtures import SLOW_OK, needs_bwrap, sub

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig
from microcoder.pipeline.schema import Problem, TestCase

STDIO = Problem(id="spin", source="test", statement="", style="stdio", time_limit_s=1.0,
                tests=[TestCase("41\n", "42\n")])
FUNCTIONAL = Problem(id="spin-f", source="test", statement="", style="functional", entry_point="f",
                     time_limit_s=1.0, tests=[TestCase("1", "1")])
SPIN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"


@needs_bwrap
def test_a_slowdown_scales_measured_times_and_turns_a_run_at_most_of_its_limit_into_tle():
    stdio = sub(STDIO, SPIN.format(s=0.6) + "print(int(input()) + 1)\n")
    functional = sub(FUNCTIONAL, "def f(n):\n" + "".join("    " + line + "\n" for line in SPIN.format(s=0.6).splitlines())
                     + "    return n\n")
    times = {}
    for slowdown in (1.0, 2.0):
        with Evaluator(workers=1, sandbox="bwrap", config=EvaluatorConfig(slowdown=slowdown, **SLOW_OK)) as ev:
            verdicts = ev.evaluate_batch([STDIO, FUNCTIONAL], [stdio, functional])
        times[slowdown] = [v.tests[0].time_s for v in verdicts]
        expected = "AC" if slowdown == 1.0 else "TLE"
        assert [v.status for v in verdicts] == [expected, expected], verdicts
    assert all(t >= 0.6 for t in times[1.0]) and all(t >= 1.0 for t in times[2.0]), times


def test_a_slowdown_must_be_a_positive_number():
    with pytest.raises(ValueError, match="slowdown"):
        Evaluator(workers=1, sandbox="none", config=EvaluatorConfig(slowdown=0.0))

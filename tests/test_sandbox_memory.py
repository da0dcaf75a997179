"""Memory is judged on the run as a whole, at the stated limit (issue 35, items 3 and 4).

A run's memory is its run group's peak less what the group held before the program started:
every process it forked, its files in /tmp and /dev/shm, an image it exec'd, all at once. MLE
above the stated limit, with no fixed slack on the group, in stdio and functional runs alike.
Each attack here was AC before (the peak was the main process's own RSS less the warm fork's,
and the group had 64 MB of slack).
"""

from __future__ import annotations

import pytest
from sandbox_fixtures import SLOW_OK, judge, needs_bwrap, needs_cgroups, sub

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig
from microcoder.pipeline.evaluator.sandbox.box import RECLAIM_ABOVE
from microcoder.pipeline.schema import Problem, TestCase

pytestmark = [needs_bwrap, needs_cgroups]

LIMIT_MB = 64
STDIO = Problem(id="mem-stdio", source="test", statement="", style="stdio", time_limit_s=3.0,
                memory_limit_mb=LIMIT_MB, tests=[TestCase("41\n", "42\n")])


@pytest.fixture(scope="module")
def solo():
    with Evaluator(workers=1, sandbox="bwrap", config=EvaluatorConfig(**SLOW_OK)) as e:
        yield e


HOLD = """
    import os, time
    def hold(mb):
        block = bytearray(mb << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        return block
"""

# ~105 MB at once under 64 MB: two children with 30 MB each, 25 MB in the main process, 20 MB in
# a /dev/shm file; each part alone well under the limit, and the right answer printed.
SPREAD = HOLD + """
    kids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            mine = hold(30)
            time.sleep(1.0)
            os._exit(0)
        kids.append(pid)
    with open("/dev/shm/held", "wb") as f:
        f.write(b"x" * (20 << 20))
    main = hold(25)
    time.sleep(0.5)
    for pid in kids:
        os.waitpid(pid, 0)
    print(int(input()) + 1)
"""


def test_memory_spread_over_children_the_main_process_and_shm_is_mle(solo):
    v = judge(solo, STDIO, sub(STDIO, SPREAD))
    assert v.status == "MLE", v


# exec of a fresh interpreter that holds 66 MB: the warm fork's RSS (~14 MB) must not be subtracted
# from a peak that no longer contains it (71.8 MB was judged AC under 64 MB). 66 MB of its own pages
# alone are over the limit, whatever of the interpreter's file pages another group was charged for.
EXEC_FRESH = """
    import os, sys
    body = "b = bytearray(66 << 20)\\nfor i in range(0, len(b), 4096): b[i] = 1\\nprint(int(input()) + 1)"
    os.execv(sys.executable, [sys.executable, "-c", body])
"""


def test_exec_of_a_fresh_interpreter_does_not_rebase_the_peak(solo):
    v = judge(solo, STDIO, sub(STDIO, EXEC_FRESH))
    assert v.status == "MLE", v


def test_programs_under_the_limit_stay_ac_and_report_their_own_peak(solo):
    """No false MLE: 40 MB in Python or C++ under 64 MB is AC, and the memory reported is the
    run's own (not the warm interpreter's pages)."""
    py = HOLD + "    b = hold(40)\n    print(int(input()) + 1)\n"
    cpp = ('#include <cstdio>\n#include <vector>\nint main(){int x; if (scanf("%d", &x) != 1) return 1;'
           ' std::vector<char> v(40 << 20, 1); printf("%d\\n", x + v[7]); }')
    for code, lang in ((py, "python"), (cpp, "cpp")):
        v = judge(solo, STDIO, sub(STDIO, code, lang))
        assert v.status == "AC", v
        assert 40 <= v.tests[0].memory_mb < 48, v
    trivial = judge(solo, STDIO, sub(STDIO, "print(int(input()) + 1)\n"))
    assert trivial.status == "AC" and trivial.tests[0].memory_mb < 8, trivial


def test_the_run_group_has_the_stated_limit_and_no_slack(solo):
    v = judge(solo, STDIO, sub(STDIO, "print(int(input()) + 1)\n"))
    assert v.status == "AC", v
    group = solo._all[0].boxes["run"].cgroup
    name = "memory.max" if group.version == "cgroup-v2" else "memory.limit_in_bytes"
    limit = int((group.dirs["memory"] / name).read_text())
    # the stated limit on top of what the group held (page cache over RECLAIM_ABOVE is dropped
    # first; rounded up to a MB), never 64 MB more
    assert LIMIT_MB << 20 <= limit <= (LIMIT_MB << 20) + RECLAIM_ABOVE + (1 << 20), limit


FUNCTIONAL = Problem(id="mem-functional", source="test", statement="", style="functional", entry_point="f",
                     time_limit_s=3.0, memory_limit_mb=LIMIT_MB,
                     tests=[TestCase(str(i), str(i)) for i in range(7)])
# Call 4 (index 4) spreads ~75 MB over a child and a /dev/shm file; every other call is quick and
# small, so calls 3..6 go to the child in one window: call 3's reply may be read after call 4 ran.
SPREAD_IN_ONE_CALL = HOLD + """
    def f(n):
        if n == 4:
            pid = os.fork()
            if pid == 0:
                mine = hold(35)
                time.sleep(0.8)
                os._exit(0)
            with open("/dev/shm/held", "wb") as f:
                f.write(b"x" * (40 << 20))
            os.waitpid(pid, 0)
            os.unlink("/dev/shm/held")
        return n
"""


def test_a_functional_call_spread_over_a_child_and_shm_is_mle_and_only_that_call(solo):
    v = solo.evaluate_batch([FUNCTIONAL], [sub(FUNCTIONAL, SPREAD_IN_ONE_CALL)], mode="all")[0]
    assert [t.status for t in v.tests] == ["AC"] * 4 + ["MLE"] + ["AC"] * 2, v
    first = solo.evaluate_batch([FUNCTIONAL], [sub(FUNCTIONAL, SPREAD_IN_ONE_CALL)])[0]
    assert first.status == "MLE", first


def test_a_functional_exec_does_not_rebase_the_peak(solo):
    code = """
    import os, sys
    def f(n):
        body = "b = bytearray(60 << 20)\\nfor i in range(0, len(b), 4096): b[i] = 1"
        os.execv(sys.executable, [sys.executable, "-c", body])
    """
    v = solo.evaluate_batch([FUNCTIONAL], [sub(FUNCTIONAL, code)])[0]
    assert v.status != "AC" and v.tests[0].status == "MLE", v


# Reads files until the group holds its page cache (charged to the group that read them first).
READ_FILES = """
    import os
    n = 0
    for root, dirs, files in os.walk("/usr"):
        for name in files:
            try:
                with open(os.path.join(root, name), "rb") as f:
                    while chunk := f.read(1 << 20):
                        n += len(chunk)
            except OSError:
                pass
            if n > (200 << 20):
                print(int(input()) + 1)
                raise SystemExit
    print(int(input()) + 1)
"""
# ~90 MB over three children: under the limit only if the group's old cache were room to take.
THREE_CHILDREN = HOLD + """
    kids = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            mine = hold(28)
            time.sleep(1.0)
            os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)
    print(int(input()) + 1)
"""


def test_page_cache_an_earlier_run_left_is_no_room_for_the_next(solo):
    """A run's baseline is what the group holds before it; page cache left there by an earlier
    run would count in the baseline while the kernel hands it to the next run on demand. It is
    dropped before each request, so the limit stays the stated one."""
    judge(solo, STDIO, sub(STDIO, READ_FILES))
    group = solo._all[0].boxes["run"].cgroup
    assert group.usage_bytes() > 32 << 20  # the cache it read is charged here
    name = "memory.max" if group.version == "cgroup-v2" else "memory.limit_in_bytes"
    v = judge(solo, STDIO, sub(STDIO, THREE_CHILDREN))
    assert v.status == "MLE", v
    limit = int((group.dirs["memory"] / name).read_text())
    assert limit <= (LIMIT_MB + 8) << 20, limit >> 20  # (a few MB of kernel memory stay charged)

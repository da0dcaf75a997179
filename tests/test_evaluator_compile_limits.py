"""Compile outputs are bounded (issue 24 item 6): a binary over `max_binary_mb` is a CE (and the
compiler cannot write files much past it), and the compile cache holds at most `compile_cache_mb`,
least recently used entries evicted first, never a binary a worker is about to install.

A compile over its limits is the source's fault (issue 35 item 2): CPU (every process of the
compiler counted) or wall clock is a cached CE; SE only when the machine itself is stalled, which
the judge decides from its own health, never from the source's CPU use. A source includes nothing
outside the include path: no /proc, no /dev, however the path is spelled."""

from __future__ import annotations

import shutil

import pytest
from sandbox_fixtures import needs_bwrap, needs_unshare_root

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.inside import compile_guard
from microcoder.pipeline.evaluator.sandbox.box import BoxError, Reply
from microcoder.pipeline.evaluator.sandbox.workspace import MB
from microcoder.pipeline.evaluator.verdict import compile as compile_module
from microcoder.pipeline.evaluator.verdict.compile import Compiler, dependencies, install
from microcoder.pipeline.schema import Problem, TestCase

SUM = Problem(id="sum", source="test", statement="", style="stdio", time_limit_s=1.0,
              tests=[TestCase("1 2\n", "3\n")])
CPP_SUM = "#include <cstdio>\nint main(){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a+b);}\n"


def cpp(code: str, sid: str) -> Submission:
    return Submission("sum", sid, "cpp", code)


# --- the binary's size, real sandboxed compilations ------------------------------------------------------------
@pytest.fixture(scope="module")
def small_binaries():
    cfg = EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5, max_binary_mb=1)
    with Evaluator(workers=2, config=cfg) as e:
        yield e


@pytest.mark.parametrize("kib", [
    3 * 1024,  # past the compiler's file-size limit: the assembler is killed writing the object file
    1536,      # within the file-size slack: the binary is built, then found too big
])
def test_a_binary_over_max_binary_mb_is_a_cached_ce(small_binaries, kib):
    code = f"char a[{kib} << 10] = {{1}};\nint main(){{ return a[7]; }}\n"
    first, again = small_binaries.evaluate_batch([SUM, SUM], [cpp(code, "a"), cpp(code, "b")])
    for v in (first, again):
        assert v.status == "CE", v
        assert "MB" in v.reason and "max_binary_mb" in v.reason, v.reason
    assert sorted([first.meta["compile_cached"], again.meta["compile_cached"]]) == [False, True]


def test_a_small_binary_still_runs_under_a_small_limit(small_binaries):
    v = small_binaries.evaluate_batch([SUM], [cpp(CPP_SUM, "ok")])[0]
    assert v.status == "AC", v


# --- the compiler's file-size limit, a fake box ------------------------------------------------------------------
class FakeBox:
    """Compiles by writing a binary of `size` bytes at the -o path and its dependency list (or replies
    with `reply`)."""

    def __init__(self, size: int = 0, reply: dict | None = None, stderr: bytes = b""):
        self.size, self.reply, self.stderr, self.requests = size, reply, stderr, []

    def inside(self, path):
        return str(path)

    def request(self, req, timeout):
        self.requests.append(req)
        if self.reply is not None:
            return Reply(self.reply, [b"", self.stderr])
        argv = req["argv"]
        with open(argv[argv.index("-o") + 1], "wb") as f:
            f.write(b"\0" * self.size)
        with open(argv[argv.index("-MF") + 1], "w") as f:  # the dependency list: the source alone
            f.write(f"{argv[argv.index('-o') + 1]}: {argv[-1]}\n")
        return Reply({"ok": True, "why": "exit", "exit": 0, "signal": None, "cpu_s": 0.1}, [b"", b""])


class FakeWorker:
    def __init__(self, build, box: FakeBox):
        self.build, self._box = build, box

    def box(self, name):
        return self._box


def test_the_compilers_files_are_limited_and_a_killed_linker_is_a_ce(tmp_path):
    killed = FakeBox(reply={"ok": True, "why": "exit", "exit": 1, "signal": None, "cpu_s": 0.5},
                     stderr=b"collect2: fatal error: ld terminated with signal 25 [File size limit exceeded]\n")
    compiler = Compiler(tmp_path / "bin", EvaluatorConfig(max_binary_mb=2))
    result = compiler.compile("int main(){}", FakeWorker(tmp_path, killed))
    assert result.status == "CE" and "max_binary_mb" in result.message, result
    assert MB * 2 <= killed.requests[0]["fsize_bytes"] <= 4 * MB  # not 512 MB any more
    again = compiler.compile("int main(){}", FakeWorker(tmp_path, killed))
    assert (again.status, again.cached, len(killed.requests)) == ("CE", True, 1)


# --- the cache's byte budget ---------------------------------------------------------------------------------------
BIN = 400 * 1024  # two fit in a 1 MB cache, three do not


def source(i: int) -> str:
    return f"int main(){{ return {i}; }}\n"


def test_the_cache_evicts_the_least_recently_used_binaries(tmp_path):
    box = FakeBox(BIN)
    worker = FakeWorker(tmp_path, box)
    compiler = Compiler(tmp_path / "bin", EvaluatorConfig(compile_cache_mb=1))
    results = [compiler.compile(source(i), worker) for i in range(5)]
    assert [r.status for r in results] == ["ok"] * 5 and len(box.requests) == 5
    assert compiler.cached_bytes <= MB
    assert [r.binary.exists() for r in results] == [False, False, False, True, True]  # evicted: gone from disk

    hit = compiler.compile(source(3), worker)  # 3 is now the most recently used, 4 the least
    assert hit.cached and len(box.requests) == 5
    compiler.compile(source(5), worker)
    assert compiler.compile(source(3), worker).cached
    assert len(box.requests) == 6
    again = compiler.compile(source(4), worker)  # evicted for 5: built again
    assert not again.cached and len(box.requests) == 7 and again.binary.exists()
    assert compiler.cached_bytes <= MB


def test_a_binary_handed_to_a_worker_is_not_evicted_before_it_installs_it(tmp_path):
    compiler = Compiler(tmp_path / "bin", EvaluatorConfig(compile_cache_mb=1))
    a = FakeWorker(tmp_path / "a", FakeBox(BIN))
    b = FakeWorker(tmp_path / "b", FakeBox(BIN))
    for w in (a, b):
        w.build.mkdir()
    mine = compiler.compile(source(0), a)  # the oldest entry, not installed yet
    others = [compiler.compile(source(i), b) for i in range(1, 4)]
    assert mine.binary.exists()  # pinned: the others were evicted instead
    assert [r.binary.exists() for r in others] == [False, False, True]
    install(mine.binary, tmp_path / "prog")
    assert (tmp_path / "prog").stat().st_size == BIN

    compiler.compile(source(4), a)  # a has installed 0 and moved on: 0 may go now
    assert not mine.binary.exists()
    assert (tmp_path / "prog").stat().st_size == BIN  # the installed hard link outlives the eviction


# --- limits and includes, real sandboxed compilations (issue 35 item 2) -----------------------------------------
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
needs_landlock = pytest.mark.skipif(compile_guard.landlock_abi() < 1, reason="the kernel has no Landlock")
ECHO = Problem(id="echo", source="test", statement="", style="stdio", time_limit_s=1.0,
               tests=[TestCase("41\n", "42\n")])
CPP_ECHO = "#include <cstdio>\nint main(){int a; scanf(\"%d\",&a); printf(\"%d\\n\",a+1);}\n"
COMPILE_LIMIT_S = 2.0  # wall limit 2 x 2 + 5 = 9 s: blocking more than 10% of it used to be "a busy machine"


@pytest.fixture(scope="module", params=[
    pytest.param("bwrap", marks=needs_bwrap),
    pytest.param("unshare", marks=needs_unshare_root),
])
def guarded(request):
    cfg = EvaluatorConfig(compile_time_limit_s=COMPILE_LIMIT_S, compile_memory_mb=1024, wall_factor=4.0,
                          wall_slack_s=20.0)
    with Evaluator(workers=1, sandbox=request.param, config=cfg) as e:
        yield e


def judge_twice(ev, code: str, problem: Problem = ECHO):
    """The verdicts of two submissions of `code`, one after the other (the second may hit the cache)."""
    first = ev.evaluate_batch([problem], [Submission(problem.id, "first", "cpp", code)])[0]
    again = ev.evaluate_batch([problem], [Submission(problem.id, "again", "cpp", code)])[0]
    return first, again


def burn_then_include(target: str) -> str:
    """About a second of CPU in the preprocessor (2^13 tokens in an #if at each of 190 include
    levels), then `#include target`."""
    macros = "#define X0 1\n" + "".join(f"#define X{i} X{i - 1}+X{i - 1}\n" for i in range(1, 14))
    return macros + f"""#if __INCLUDE_LEVEL__ < 190
#if X13
#endif
#include __FILE__
#else
#include "{target}"
#endif
""" + CPP_ECHO.replace("int main", "#if __INCLUDE_LEVEL__ == 0\nint main") + "#endif\n"


@needs_gxx
@pytest.mark.parametrize("target", ["/dev/stdout", "/proc/self/fd/2"])
def test_a_compile_that_works_then_blocks_on_its_own_pipe_is_a_cached_ce(guarded, target):
    """The compiler's stdout and stderr are pipes (to the assembler, to the judge): included, they
    blocked it until the wall limit, having used its CPU share first, which made it "a busy machine":
    SE, never cached, the wall limit paid again at every resubmission. Now nothing a source can
    include is a pipe, and what the compiler opens is held to its include path."""
    first, again = judge_twice(guarded, burn_then_include(target))
    assert first.status == "CE", first
    assert (again.status, again.meta["compile_cached"]) == ("CE", True), again


INCLUDES = {  # each compiles (to an AC) when the include is let through
    "proc-fd": '#include "/proc/self/fd/0"\n',
    "dev-stdin": '#include "/dev/stdin"\n',
    "dev-null": '#include </dev/null>\n',
    "climbing": '#include "../../../../../../../../../../../../proc/self/fd/0"\n',
    "built-by-macros": "#define S(x) #x\n#define XS(x) S(x)\n#include XS(/proc/self/fd/0)\n",
    "proc-file": 'int k = 0\n#include "/proc/sys/kernel/pid_max"\n;\n',  # read as empty (its size is 0)
    "dev-zero": "#include </dev/zero>\n",  # endless: runs to the compiler's memory limit without Landlock
}


@needs_gxx
@pytest.mark.parametrize("name", [pytest.param(n, marks=needs_landlock) if n == "dev-zero" else n for n in INCLUDES])
def test_a_source_includes_nothing_from_proc_or_dev(guarded, name):
    first, again = judge_twice(guarded, INCLUDES[name] + CPP_ECHO)
    assert first.status == "CE", first
    assert "/proc/" in first.reason or "/dev/" in first.reason, first.reason
    assert (again.status, again.meta["compile_cached"]) == ("CE", True), again


@needs_gxx
@pytest.mark.parametrize("name", ["proc-fd", "dev-stdin", "dev-null", "climbing", "built-by-macros", "proc-file",
                                  "burn-then-dev-stdout"])
def test_without_landlock_the_compilers_dependency_list_holds_the_includes(guarded, monkeypatch, name):
    """A kernel without Landlock: nothing the compiler can open is a pipe (it blocks on nothing),
    and a compile that read a file outside the include path is a CE all the same."""
    monkeypatch.setattr(compile_module, "LANDLOCK", False)
    code = burn_then_include("/dev/stdout") if name.startswith("burn") else INCLUDES[name] + CPP_ECHO
    first, again = judge_twice(guarded, code.replace("int main", f"// {name}\nint main", 1))  # not cached yet
    assert first.status == "CE" and "outside the include path" in first.reason, first
    assert "/proc/" in first.reason or "/dev/" in first.reason, first.reason
    assert (again.status, again.meta["compile_cached"]) == ("CE", True), again


@needs_gxx
def test_the_system_headers_and_the_sources_own_folder_are_still_included(guarded):
    code = "#include <vector>\n#ifndef ONCE\n#define ONCE\n#include __FILE__\n#else\n" + CPP_ECHO + "#endif\n"
    v = guarded.evaluate_batch([ECHO], [Submission("echo", "self", "cpp", code)])[0]
    assert v.status == "AC", v


CONSTEXPR_BURN = """
constexpr long spin() { long s = 0; for (long i = 0; i < 200000; ++i) for (long j = 0; j < 200000; ++j) s += i ^ j; return s; }
constexpr long burnt = spin();
"""


@needs_gxx
def test_a_compile_over_its_cpu_limit_is_a_cached_ce_counting_the_compilers_children(guarded):
    """cc1plus, a child of the g++ driver, does the work here: the run's counter holds it to the
    compile's CPU limit, long before the wall limit."""
    first, again = judge_twice(guarded, CONSTEXPR_BURN + CPP_ECHO)
    assert first.status == "CE" and "CPU time" in first.reason, first
    assert (again.status, again.meta["compile_cached"]) == ("CE", True), again


def test_the_dependency_list_is_read_as_make_writes_it():
    rule = "/b/main: /b/main.cpp /usr/include/stdio.h \\\n /usr/include/a\\ b.h /x/\\#y $$z.h\n"
    assert dependencies(rule) == ["/b/main.cpp", "/usr/include/stdio.h", "/usr/include/a b.h", "/x/#y", "$z.h"]


# --- a compile out of wall time: the machine's health decides, a fake box ------------------------------------
WALL = {"ok": True, "why": "wall", "exit": None, "signal": 9, "cpu_s": 20.0, "total_cpu_s": 20.0, "wall_s": 65.0}


def wall_hit(tmp_path, health):
    box = FakeBox(reply=WALL)
    compiler = Compiler(tmp_path / "bin", EvaluatorConfig(), health=health)
    worker = FakeWorker(tmp_path, box)
    return [compiler.compile("int main(){}", worker) for _ in range(2)], box


def test_a_compile_out_of_wall_time_on_a_healthy_machine_is_a_cached_ce(tmp_path):
    """20 s of CPU in 65 s of wall time used to be "a busy machine" (SE): a source that computes,
    then blocks, had its SE on demand."""
    (first, again), box = wall_hit(tmp_path, health=lambda worker: None)
    assert first.status == "CE" and "wall-clock" in first.message, first
    assert again.cached and len(box.requests) == 1


def test_a_compile_out_of_wall_time_on_a_stalled_machine_is_se_and_not_cached(tmp_path):
    (first, again), box = wall_hit(tmp_path, health=lambda worker: "a reference compile got 3% of a CPU")
    assert first.status == again.status == "SE" and "3% of a CPU" in first.message, first
    assert not again.cached and len(box.requests) == 2


class ProbedBox(FakeBox):
    """The submission's compile runs out of wall time; each reference compile after it replies with
    the next of `probes` (a header, or an exception to raise)."""

    def __init__(self, probes):
        super().__init__(reply=WALL)
        self.probes = list(probes)

    def request(self, req, timeout):
        if not any("reference" in a for a in req["argv"]):
            return super().request(req, timeout)
        self.requests.append(req)
        probe = self.probes.pop(0)
        if isinstance(probe, Exception):
            raise probe
        return Reply({"ok": True, "why": "exit", "exit": 0, "signal": None, **probe}, [b"", b"", b""])


HEALTHY = {"cpu_s": 0.15, "total_cpu_s": 0.16, "wall_s": 0.2}
STALLED = {"cpu_s": 0.15, "total_cpu_s": 0.16, "wall_s": 2.0}  # 8% of a CPU


@pytest.mark.parametrize(("probes", "status"), [
    ([HEALTHY], "CE"),
    ([STALLED, HEALTHY], "CE"),  # a blip: the second reference compile got its CPU
    ([STALLED, STALLED], "SE"),
    ([{"why": "wall", "exit": None, "signal": 9, "cpu_s": 0.0, "wall_s": 10.0}] * 2, "SE"),
    ([BoxError("the judge died")] * 2, "SE"),
])
def test_the_machines_health_is_a_reference_compiles_share_of_a_cpu(tmp_path, probes, status):
    box = ProbedBox(probes)
    result = Compiler(tmp_path / "bin", EvaluatorConfig()).compile("int main(){}", FakeWorker(tmp_path, box))
    assert result.status == status, result
    assert box.probes == [] and len(box.requests) == 1 + len(probes)

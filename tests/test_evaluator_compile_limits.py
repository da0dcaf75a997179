"""Compile outputs are bounded (issue 24 item 6): a binary over `max_binary_mb` is a CE (and the
compiler cannot write files much past it), and the compile cache holds at most `compile_cache_mb`,
least recently used entries evicted first, never a binary a worker is about to install."""

from __future__ import annotations

import pytest

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.sandbox.box import Reply
from microcoder.pipeline.evaluator.sandbox.workspace import MB
from microcoder.pipeline.evaluator.verdict.compile import Compiler, install
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
    """Compiles by writing a binary of `size` bytes at the -o path (or replies with `reply`)."""

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

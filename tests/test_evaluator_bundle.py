"""Output validators given as a program directory (Kattis problem package format), judged by the
real sandbox: several C++ sources, `build` + `run` scripts, several Python files; a build that
fails is SE with its reason; packing refuses what is not source text."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from microcoder.pipeline import program_bundle
from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.verdict import bundle, checkers, testlib
from microcoder.pipeline.schema import Checker, Problem, TestCase, validate_problem

CFG = EvaluatorConfig(wall_factor=4.0, wall_slack_s=20.0, checker_time_limit_s=3.0)
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

RIGHT = "print(int(input()) + 1)\n"
WRONG = "print(41)\n"

# Kattis protocol: validator input answer feedback_dir < team_output; 42 = accepted, 43 = wrong
CPP_MAIN = """\
#include <cstdio>
#include <string>
#include "compare.h"
int main(int argc, char** argv) {
    long answer = 0, got = 0;
    FILE* f = fopen(argv[2], "r");
    if (!f || fscanf(f, "%ld", &answer) != 1) return 1;
    if (scanf("%ld", &got) != 1) got = -1;
    if (same(answer, got)) return 42;
    FILE* msg = fopen((std::string(argv[3]) + "judgemessage.txt").c_str(), "w");
    if (msg) fprintf(msg, "expected %ld, got %ld\\n", answer, got);
    return 43;
}
"""
CPP_HEADER = "#pragma once\nbool same(long a, long b);\n"
CPP_COMPARE = '#include "compare.h"\nbool same(long a, long b) { return a == b; }\n'
CPP_SINGLE = CPP_MAIN.replace('#include "compare.h"', "static bool same(long a, long b) { return a == b; }")

PY_UTIL = """\
def read_number(text):
    parts = text.split()
    return int(parts[0]) if parts else None
"""
PY_VALIDATOR = """\
import os
import sys

from util import read_number


def main():
    answer = read_number(open(sys.argv[2]).read())
    got = read_number(sys.stdin.read())
    if got == answer:
        sys.exit(42)
    with open(os.path.join(sys.argv[3], "judgemessage.txt"), "w") as f:
        f.write(f"expected {answer}, got {got}\\n")
    sys.exit(43)


if __name__ == "__main__":
    main()
"""


def write_dir(folder: Path, files: dict[str, str], executable: tuple[str, ...] = ()) -> Path:
    folder.mkdir(parents=True)
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.chmod(path, 0o755 if rel in executable else 0o644)
    return folder


def problem(pid: str, program: str) -> Problem:
    p = Problem(id=pid, source="test", statement="Print n + 1.", style="stdio", time_limit_s=2.0,
                tests=[TestCase("41\n", "42\n"), TestCase("1\n", "2\n")],
                checker=Checker(kind="program", language="bundle", protocol="kattis", program=program))
    assert validate_problem(p) == []
    return p


def sub(p: Problem, code: str, sid: str) -> Submission:
    return Submission(p.id, sid, "python", textwrap.dedent(code))


@pytest.fixture(scope="module")
def ev():
    with Evaluator(workers=1, config=CFG) as e:
        yield e


def judge_right_and_wrong(ev, p: Problem) -> None:
    right, wrong = ev.evaluate_batch([p], [sub(p, RIGHT, "right"), sub(p, WRONG, "wrong")])
    assert right.status == "AC" and right.passed == 2, right
    assert wrong.status == "WA", wrong
    assert wrong.tests[0].diff == "expected 42, got 41", wrong.tests[0].diff


# --- judged ------------------------------------------------------------------------------------------------
@needs_gxx
def test_several_cpp_sources_and_a_header_are_compiled_together(ev, tmp_path):
    folder = write_dir(tmp_path / "validator", {"validator.cpp": CPP_MAIN, "compare.cpp": CPP_COMPARE,
                                                "compare.h": CPP_HEADER})
    judge_right_and_wrong(ev, problem("bundle-cpp", program_bundle.pack_program_dir(folder)))


BUILD = "#!/bin/sh\nset -e\ng++ -O2 -o validator validator.cpp\n"
RUN = '#!/bin/sh\nexec "$(dirname "$0")/validator" "$@"\n'
# a build that writes a `run` of its own, without `#!` (a POSIX shell runs such a script with sh)
BUILD_WRITES_RUN = BUILD + "printf '%s\\n' 'exec \"$(dirname \"$0\")/validator\" \"$@\"' > run\nchmod +x run\n"


@needs_gxx
@pytest.mark.parametrize(("files", "executable"), [
    ({"build": BUILD, "run": RUN, "validator.cpp": CPP_SINGLE}, ("build", "run")),
    ({"build": BUILD_WRITES_RUN, "validator.cpp": CPP_SINGLE}, ("build",)),
], ids=["build-and-run", "build-writes-run"])
def test_a_build_script_builds_the_validator_and_run_runs_it(ev, tmp_path, files, executable):
    folder = write_dir(tmp_path / "validator", files, executable)
    judge_right_and_wrong(ev, problem(f"bundle-script-{len(files)}", program_bundle.pack_program_dir(folder)))


TESTLIB_MAIN = """\
#include "testlib.h"
#include "sums.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    int n = inf.readInt();
    long long a = ouf.readLong(), b = ouf.readLong();
    if (!adds_up(a, b, n)) quitf(_wa, "%lld + %lld != %d", a, b, n);
    quitf(_ok, "a valid pair");
}
"""


@needs_gxx
@pytest.mark.skipif(testlib.include_dir(None) is None,
                    reason="testlib.h is not installed: `make setup` installs it (it needs PyPI)")
def test_a_testlib_checker_of_several_sources_finds_the_installed_header(ev, tmp_path):
    folder = write_dir(tmp_path / "checker", {
        "checker.cpp": TESTLIB_MAIN, "sums.h": "bool adds_up(long long a, long long b, int n);\n",
        "sums.cpp": '#include "sums.h"\nbool adds_up(long long a, long long b, int n) { return a + b == n; }\n'})
    p = Problem(id="bundle-testlib", source="test", statement="Two numbers adding up to n.", style="stdio",
                tests=[TestCase("5\n", "2 3\n")],
                checker=Checker(kind="program", language="bundle", protocol="testlib",
                                program=program_bundle.pack_program_dir(folder)))
    other, wrong = ev.evaluate_batch([p], [sub(p, "print(1, 4)", "other"), sub(p, "print(1, 1)", "wrong")])
    assert other.status == "AC", other
    assert wrong.status == "WA" and "1 + 1 != 5" in wrong.tests[0].diff, wrong


@pytest.mark.parametrize("files", [
    {"util.py": PY_UTIL, "validator.py": PY_VALIDATOR},
    {"__init__.py": "", "__main__.py": PY_VALIDATOR, "util.py": PY_UTIL},  # the 2025-09 form
], ids=["main-guard", "package"])
def test_several_python_files_run_from_the_entry_with_the_folder_on_the_path(ev, tmp_path, files):
    folder = write_dir(tmp_path / "validator", files)
    judge_right_and_wrong(ev, problem(f"bundle-python-{len(files)}", program_bundle.pack_program_dir(folder)))


def test_the_command_of_a_checker_not_prepared_is_refused(tmp_path):
    ck = Checker(kind="program", language="bundle", program='{"files": {"main.py": ""}}')
    worker = SimpleNamespace(prepared={"checker": "another one"}, check=tmp_path)
    with pytest.raises(checkers.CheckerFailure, match="not prepared"):
        checkers.program_command(ck, None, worker)


def test_a_build_that_fails_is_se_with_its_reason(ev, tmp_path):
    build = "#!/bin/sh\necho 'cannot find the frobnicator' >&2\nexit 3\n"
    folder = write_dir(tmp_path / "validator", {"build": build, "run": RUN}, ("build", "run"))
    p = problem("bundle-broken", program_bundle.pack_program_dir(folder))
    v = ev.evaluate_batch([p], [sub(p, RIGHT, "right")])[0]
    assert v.status == "SE", v
    diff = v.tests[0].diff
    assert "checker does not build" in diff and "exit code 3" in diff and "cannot find the frobnicator" in diff, diff


def test_a_build_that_leaves_no_run_is_se(ev, tmp_path):
    folder = write_dir(tmp_path / "validator", {"build": "#!/bin/sh\ntrue\n"}, ("build",))
    p = problem("bundle-no-run", program_bundle.pack_program_dir(folder))
    v = ev.evaluate_batch([p], [sub(p, RIGHT, "right")])[0]
    assert v.status == "SE" and "did not leave an executable file called `run`" in v.tests[0].diff, v


# --- packing and planning ----------------------------------------------------------------------------------
def test_packing_refuses_a_binary_file(tmp_path):
    folder = write_dir(tmp_path / "validator", {"run": RUN}, ("run",))
    (folder / "validator").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00")
    with pytest.raises(ValueError, match="validator: a binary file"):
        program_bundle.pack_program_dir(folder)


def test_packing_refuses_a_file_over_the_limit_and_a_link_out(tmp_path):
    folder = write_dir(tmp_path / "big", {"main.py": "x = 1\n"})
    (folder / "data.txt").write_text("a" * (program_bundle.MAX_FILE_BYTES + 1))
    with pytest.raises(ValueError, match="data.txt: .* over the 4 MB limit on a file"):
        program_bundle.pack_program_dir(folder)
    outside = write_dir(tmp_path / "outside", {"secret.txt": "s\n"})
    folder = write_dir(tmp_path / "linked", {"main.py": "x = 1\n"})
    (folder / "secret.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ValueError, match="secret.txt: a link out of the program directory"):
        program_bundle.pack_program_dir(folder)


def test_packing_keeps_executable_bits_and_skips_what_the_format_ignores(tmp_path):
    folder = write_dir(tmp_path / "validator", {"build": BUILD, "run": RUN, "validator.cpp": CPP_SINGLE,
                                                ".gitignore": "validator\n", "lib/x.h": "int x;\n"},
                       ("build", "run"))
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "m.pyc").write_bytes(b"\0\1")
    packed = json.loads(program_bundle.pack_program_dir(folder))
    assert sorted(packed["files"]) == ["build", "lib/x.h", "run", "validator.cpp"]
    assert sorted(packed["executable"]) == ["build", "run"]
    out = tmp_path / "unpacked"
    program_bundle.unpack(json.dumps(packed), out)
    assert (out / "lib" / "x.h").read_text() == "int x;\n"
    assert os.stat(out / "build").st_mode & 0o111 and not os.stat(out / "validator.cpp").st_mode & 0o111


def test_unpacking_refuses_paths_out_of_the_folder(tmp_path):
    for rel in ("../evil", "/etc/passwd", "a/../../b", ".hidden"):
        with pytest.raises(ValueError, match="bundle file name"):
            program_bundle.unpack(json.dumps({"files": {rel: "x"}}), tmp_path / "out")
    with pytest.raises(ValueError, match="must be JSON"):
        program_bundle.unpack("not json", tmp_path / "out")


@pytest.mark.parametrize(("files", "want"), [
    ({"build": "", "x.cpp": ""}, bundle.Plan("script", build=True)),
    ({"run": ""}, bundle.Plan("script")),
    ({"b.cpp": "", "a.cc": "", "a.h": ""}, bundle.Plan("cpp", sources=("a.cc", "b.cpp"))),
    ({"a.c": "", "b.c": "", "x.cpp": ""}, bundle.Plan("c", sources=("a.c", "b.c"))),
    ({"__init__.py": "", "__main__.py": "", "m.py": ""}, None),
    ({"main.py": "", "z.py": ""}, None),
    ({"a.py": "", "v.py": "if __name__ == '__main__':\n    pass\n"}, None),
    ({"b.py": "", "a.py": ""}, None),
])
def test_the_plan_follows_the_format(files, want):
    got = bundle.plan(files)
    if want is not None:
        assert got == want
    else:
        entries = {"__main__.py": "", "main.py": "main.py", "v.py": "v.py", "a.py": "a.py"}
        assert got.kind == "python" and got.entry == next(entries[f] for f in entries if f in files), got


def test_a_directory_with_no_known_source_has_no_plan():
    with pytest.raises(ValueError, match="no build or run script and no C\\+\\+, C or Python source"):
        bundle.plan({"README": "hello\n", "validator.java": ""})


# --- what a build leaves is never followed on the host -------------------------------------------------------
ACCEPT = "#!/bin/sh\nexit 42\n"


def snapshot(folder: Path) -> dict[str, tuple]:
    """Each entry of `folder` (itself as "."): owner, mode, size, modification time."""
    entries = {".": os.lstat(folder)}
    entries.update((path.name, os.lstat(path)) for path in folder.iterdir())
    return {name: (st.st_uid, st.st_gid, st.st_mode, st.st_size, st.st_mtime_ns) for name, st in entries.items()}


def test_a_build_that_swaps_its_folder_for_a_link_to_a_host_folder_reaches_nothing_there(ev, tmp_path):
    host = tmp_path / "host"
    host.mkdir()
    (host / "existing").write_text("the host's\n")
    before = snapshot(host)
    # the review's scenario: the build replaces its own folder (and the old fixed name) by a link
    # to a host folder and fails; the next build in that worker must not write or chown there
    swap = (f'#!/bin/sh\nhere="$(pwd)"\ncd .. && rm -rf "$here" && ln -s {host} "$here"\n'
            f"ln -sfn {host} bundle\nexit 3\n")
    evil = problem("bundle-swaps-its-folder", json.dumps({"files": {"build": swap, "run": ACCEPT}}))
    assert ev.evaluate_batch([evil], [sub(evil, RIGHT, "right")])[0].status == "SE"
    files = {"build": "#!/bin/sh\ntrue\n", "run": ACCEPT, "planted.txt": "from the next build\n"}
    after = problem("bundle-after-the-swap", json.dumps({"files": files}))
    v = ev.evaluate_batch([after], [sub(after, RIGHT, "right")])[0]
    assert snapshot(host) == before
    assert v.status == "AC", v


# the build plants a FIFO, a link to /etc/passwd and a relative link that only looks as if it
# stayed inside (d/up is `..`, so d/up/../.. is two folders above); `run` says what came through
PLANTS = """\
#!/bin/sh
mkfifo pipe && ln -s /etc/passwd passwd && mkdir d && ln -s .. d/up && ln -s d/up/../.. sneaky
ln -s run also_run
"""
REPORTS = """\
#!/bin/sh
cd "$(dirname "$0")"
for f in pipe passwd sneaky; do
    if [ -e "$f" ] || [ -L "$f" ]; then echo "$f came through" > "$3judgemessage.txt"; exit 43; fi
done
[ -L also_run ] || { echo "the link inside is gone" > "$3judgemessage.txt"; exit 43; }
exit 42
"""


def test_a_fifo_and_links_out_left_by_a_build_are_not_installed(ev):
    p = problem("bundle-plants", json.dumps({"files": {"build": PLANTS, "run": REPORTS}}))
    v = ev.evaluate_batch([p], [sub(p, RIGHT, "right")])[0]
    assert v.status == "AC", v


def test_copying_products_never_opens_a_fifo_nor_copies_a_foreign_file(tmp_path):
    src = tmp_path / "src"
    (src / "lib").mkdir(parents=True)
    (src / "run").write_text("#!/bin/sh\n")
    os.chmod(src / "run", 0o755)
    (src / "lib" / "data.txt").write_text("data\n")
    os.mkfifo(src / "pipe")  # opened for reading, it would block
    (src / "passwd").symlink_to("/etc/passwd")
    (src / "lib" / "up").symlink_to("..")
    (src / "sneaky").symlink_to("lib/up/../..")
    (src / "inside").symlink_to("lib/data.txt")
    owner = None
    if os.geteuid() == 0:  # as the box's uid does: a hard link to the host's file is not the build's
        owner = 12345
        for path in (src / "run", src / "lib" / "data.txt"):
            os.chown(path, owner, owner)
        (src / "foreign").write_text("root's\n")
    dst = tmp_path / "dst"
    dst.mkdir()
    fds = [os.open(folder, os.O_RDONLY | os.O_DIRECTORY) for folder in (src, dst)]
    try:
        bundle._copy_products(*fds, limit=bundle.MB, owner=owner)
    finally:
        for fd in fds:
            os.close(fd)
    got = sorted(str(path.relative_to(dst)) for path in dst.rglob("*"))
    assert got == ["inside", "lib", "lib/data.txt", "lib/up", "run"], got
    assert os.stat(dst / "run").st_mode & 0o777 == 0o755 and (dst / "inside").read_text() == "data\n"


def test_the_build_dir_is_emptied_without_following_what_was_planted(tmp_path):
    host = tmp_path / "host"
    host.mkdir()
    (host / "existing").write_text("the host's\n")
    before = snapshot(host)
    build = tmp_path / "build"
    build.mkdir()
    (build / "bundle").symlink_to(host)
    os.mkfifo(build / "pipe")
    try:
        nest(build, 2000)  # deeper than the recursion limit
        with bundle._fresh_folder(build) as (name, work):
            assert sorted(os.listdir(build)) == [name] and os.listdir(work) == []
            program_bundle.write_files({"run": ACCEPT, "lib/x.txt": "x\n"}, set(), work)
            (build / name / "extra").symlink_to(host)
        assert os.listdir(build) == [] and snapshot(host) == before
    finally:
        subprocess.run(["rm", "-rf", str(build)], check=True)  # pytest's own clean-up recurses


def nest(folder: Path, depth: int) -> None:
    """Folders `a/a/.../a`, `depth` deep, under `folder`."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("a", dir_fd=fd)
            inner = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def test_a_program_whose_file_is_also_a_folder_or_too_deep_is_refused():
    with pytest.raises(ValueError, match="'a': both a file and a folder"):
        program_bundle.load(json.dumps({"files": {"a": "x", "a/b": "y"}}))
    with pytest.raises(ValueError, match="nested over 32 folders deep"):
        program_bundle.load(json.dumps({"files": {"/".join(["d"] * 40): "x"}}))

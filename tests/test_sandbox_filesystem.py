"""What a program sees of the filesystem, judged by the real sandbox (bubblewrap; the unshare
fallback where marked): a new root with read-only binds that never hide the interpreter, an empty
environment (the parent's secrets are invisible), writes only in its own working directory, a
minimal read-only `/dev`; under the unshare fallback, closed directories covered, its own
unprivileged uid, and the host's shared folders left untouched."""

from __future__ import annotations

import ast
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from sandbox_fixtures import (
    ECHO,
    FAST,
    SLOW_OK,
    evaluator_fixture,
    judge,
    needs_bwrap,
    needs_unshare_root,
    run,
    sub,
)

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig
from microcoder.pipeline.evaluator.sandbox import launch as sb
from microcoder.pipeline.evaluator.sandbox.launch import inside_path
from microcoder.pipeline.schema import Problem, TestCase

SECRET = "hf_fake_secret_do_not_leak_7351"


@pytest.fixture(scope="module")
def ev():
    os.environ["HF_TOKEN"] = SECRET  # set in the parent before the judges start
    try:
        with Evaluator(workers=2, sandbox="bwrap", config=EvaluatorConfig(**FAST)) as e:
            yield e
    finally:
        os.environ.pop("HF_TOKEN", None)


solo = evaluator_fixture("solo", 1, **SLOW_OK)
solo_unshare = evaluator_fixture("solo_unshare", 1, "unshare", **SLOW_OK)


# --- the box's root, binds and environment ---------------------------------------------------------------
@needs_bwrap
def test_parent_secrets_are_invisible(ev):
    v = run(ev, """
        import os, glob
        seen = repr(dict(os.environ))
        for path in glob.glob("/proc/*/environ"):
            try:
                seen += open(path, "rb").read().decode(errors="replace")
            except OSError:
                pass
        print("LEAK" if "hf_" in seen or "HF_TOKEN" in seen else 42)
    """, keep_outputs=True)
    assert v.status == "AC", v
    assert SECRET not in (v.tests[0].output or "")


@needs_bwrap
def test_writes_outside_the_workdir_fail(ev, tmp_path):
    job, inputs = inside_path("job"), inside_path("inputs")
    target = tmp_path / "escaped.txt"
    v = run(ev, f"""
        import os
        wrote = []
        for path in [{str(target)!r}, "/etc/escaped", "/usr/escaped", {job + "/escaped"!r}, {inputs + "/escaped"!r},
                     {inside_path("judge") + "/escaped"!r}, {os.getcwd() + "/escaped"!r}, "/escaped"]:
            try:
                with open(path, "w") as f:
                    f.write("x")
                wrote.append(path)
            except OSError:
                pass
        open("local.txt", "w").write("fine")  # the private working directory is writable
        print(42 if not wrote else wrote)
    """)
    assert v.status == "AC", v
    assert not target.exists() and not os.path.exists("escaped")


def test_bind_targets_never_hide_the_interpreter(monkeypatch):
    """A checkout at /check/work/main had its venv hidden by the check box's bind at /check (every
    checker run was an SE). Bind targets now live under a root clear of the interpreter's paths."""
    sb.mount_root.cache_clear()
    monkeypatch.setattr(sb, "interpreter_paths", lambda: ["/box/work/main/.venv", "/box1", "/usr"])
    try:
        assert sb.mount_root() == "/box2" and sb.inside_path("check") == "/box2/check"
        spec = sb.BoxSpec(kind="bwrap")
        with pytest.raises(sb.SandboxUnavailable, match="would hide the interpreter at /box/work/main/.venv"):
            sb.bwrap_args(spec, [sb.Bind(Path("/tmp"), "/box")])
        args = sb.bwrap_args(spec, [sb.Bind(Path("/tmp"), sb.inside_path("check"))])
        assert args[args.index("/box2/check") - 2] == "--ro-bind"
    finally:
        sb.mount_root.cache_clear()


# --- /dev -------------------------------------------------------------------------------------------------
DEV_LOOK = """
    import os
    try:
        open("/dev/left-behind", "w").close()
        wrote = "wrote"
    except OSError:
        wrote = "read-only"
    print(sorted(os.listdir("/dev")), wrote, os.path.exists("/dev/ptmx"), len(open("/dev/urandom", "rb").read(8)))
"""
DEV_PROBLEM = Problem(id="dev", source="test", statement="", style="stdio", time_limit_s=2.0, tests=[TestCase(
    "", "['fd', 'full', 'null', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'urandom', 'zero'] read-only False 8\n")])


@needs_bwrap
def test_the_box_dev_holds_only_devices_that_do_not_block_and_is_read_only(solo):
    v = judge(solo, DEV_PROBLEM, sub(DEV_PROBLEM, DEV_LOOK))
    assert v.status == "AC", v


@needs_unshare_root
def test_the_unshare_fallback_dev_is_the_same(solo_unshare):
    v = judge(solo_unshare, DEV_PROBLEM, sub(DEV_PROBLEM, DEV_LOOK))
    assert v.status == "AC", v


# --- the unshare fallback: closed directories, its own uid, the host's shared folders ----------------------
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("setpriv") is None,
                    reason="the unshare fallback drops to its own uid only when run as root")
def test_unshare_fallback_runs_unprivileged_and_hides_closed_directories(tmp_path):
    """Without bubblewrap, a root evaluator whose interpreter sits under a closed directory (/root,
    0700) used to run submissions as root. Now the box covers such a directory with an empty tmpfs
    and binds back only what the judge needs."""
    closed = sb.closed_ancestor(sys.base_prefix) or sb.closed_ancestor(str(Path(sb.HARNESS_DIR)))
    code = textwrap.dedent(f"""
        import os
        print(os.getuid())
        try:
            print(sorted(os.listdir({closed!r})) if {closed!r} != "None" else "-")
        except OSError as e:
            print(type(e).__name__)
    """)
    with Evaluator(workers=1, sandbox="unshare") as solo:
        v = solo.evaluate_batch([ECHO], [sub(ECHO, code)], keep_outputs=True)[0]
        assert "unprivileged uid" not in solo.meta.get("sandbox_warning", ""), solo.meta
    uid, listing = v.tests[0].output.splitlines()[:2]
    assert int(uid) >= sb.UID_BASE, v
    if closed is not None:  # only the path components leading to what the judge needs
        needed = {Path(p).relative_to(closed).parts[0] for p in (*sb.interpreter_paths(), str(sb.HARNESS_DIR))
                  if p.startswith(closed + "/")}
        assert set(ast.literal_eval(listing)) == needed, (listing, needed)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("setpriv") is None,
                    reason="the unshare fallback drops to its own uid only when run as root")
def test_unshare_fallback_drops_its_uid_with_a_closed_temp_dir_and_a_strict_umask(tmp_path, monkeypatch):
    """The evaluator's folders under a closed TMPDIR, and umask 077: the box still drops to its own
    uid (the binds are staged outside what the cover hides; folders are made 0755 whatever the umask)."""
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(closed))
    stages_before = set(Path("/tmp").glob("microcoder-stage-*"))
    old = os.umask(0o077)
    try:
        with Evaluator(workers=1, sandbox="unshare") as solo:
            assert str(solo.root).startswith(str(closed))
            v = solo.evaluate_batch([ECHO], [sub(ECHO, "import os\nprint(os.getuid())\n")], keep_outputs=True)[0]
            assert "unprivileged uid" not in solo.meta.get("sandbox_warning", ""), solo.meta
    finally:
        os.umask(old)
    assert v.tests and int(v.tests[0].output) >= sb.UID_BASE, v
    assert set(Path("/tmp").glob("microcoder-stage-*")) == stages_before  # the staging folder is removed


HOST_FOLDERS = """
    import os
    written = []
    for d in ("/tmp", "/var/tmp", "/run/lock", os.environ["TMPDIR"]):
        try:
            with open(os.path.join(d, "redteam-left-behind"), "w") as f:
                f.write("x")
            written.append(d == os.environ["TMPDIR"] and "TMPDIR" or d)
        except OSError:
            pass
    print(written)
"""
HOST_FOLDERS_PROBLEM = Problem(id="host-folders", source="test", statement="", style="stdio", time_limit_s=2.0,
                               tests=[TestCase("", "['TMPDIR']\n")])
CPP_ECHO = '#include <cstdio>\nint main(){long long x; scanf("%lld", &x); printf("%lld\\n", x + 1);}\n'


@needs_unshare_root
def test_unshare_fallback_leaves_nothing_in_the_hosts_shared_folders(solo_unshare):
    try:
        v = judge(solo_unshare, HOST_FOLDERS_PROBLEM, sub(HOST_FOLDERS_PROBLEM, HOST_FOLDERS))
        assert v.status == "AC", v
    finally:
        left = [d for d in ("/tmp", "/var/tmp", "/run/lock") if os.path.exists(f"{d}/redteam-left-behind")]
        for d in left:
            os.unlink(f"{d}/redteam-left-behind")
    assert left == []
    if shutil.which("g++"):  # the build box still writes its own folder
        assert judge(solo_unshare, ECHO, sub(ECHO, CPP_ECHO, "cpp", "cpp")).status == "AC"

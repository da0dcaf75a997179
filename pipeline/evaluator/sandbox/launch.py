"""How a judge process is sandboxed: bubblewrap, an `unshare` fallback, or none (tests only).

bwrap (the default): a new root holding read-only binds of the system dirs (/usr, /etc, ...) and of
the interpreter (sys.base_prefix, sys.prefix) only, so home directories, the repository, the data
and other jobs are invisible; private size-limited tmpfs /tmp and /dev/shm; a /dev of its own holding only null, zero, full,
random and urandom (no terminal, no ptmx: nothing a program or the compiler, told to
`#include "/dev/ptmx"`, can block on); new PID, network
(loopback only, down), IPC and UTS namespaces; the judge process is PID 1 (`--as-pid-1`), so a
program cannot signal it and the kernel kills the whole namespace when it exits;
`--die-with-parent` and `--new-session`.

Process count (fork bombs): RLIMIT_NPROC is ignored for uid 0, so as root the judge drops to an
unprivileged uid of its own per box (`setpriv`, keeping the parent-death signal) and RLIMIT_NPROC
is set inside (`prlimit`); as an ordinary user bwrap makes a user namespace and the same limit is
counted per namespace. Before that drop (`PROC_STEPS`, bwrap and unshare alike) the box's /proc
is remounted `hidepid=ptraceable`, so a program sees only itself and its own children, and the
judge gets a /proc of its own that shows every process. As an ordinary user there is no such
step (util-linux `mount` refuses a uid other than 0, and under unshare the box's processes keep
every capability of its user namespace): /proc shows the judge and fork server, non-dumpable.
See bench/README.md for what was measured. Where the machine has control groups, each box start
also has a run group (`cgroups.py`: CPU, memory and pids.max for a run as a whole; the rlimits
are then the second line).

Inside any sandbox kind, every program the judge forks also runs under a seccomp filter
(`syscall_filter.py`): it shares the judge's uid, and must not reach the judge through prlimit /
setpriority / sched_* calls, kernel keyrings or new namespaces.

unshare (fallback when bwrap is missing): new PID/network/IPC/UTS/mount namespaces, a private
tmpfs as scratch, the same uid drop and rlimits, the same minimal /dev (a tmpfs moved over the host's), the host's
world-writable folders (/tmp, /var/tmp, /run/lock, ...) read-only inside (a program could leave
files there for the next one, or fill the host's disk), but the host filesystem stays visible (read-only
only through file permissions). A closed directory above what the judge needs (an interpreter
under /root, 0700) is covered by an empty tmpfs with only those paths bound back, so the uid drop
works there and the rest of that directory is hidden. none: rlimits and process groups only; for tests.

`auto` fails closed: bwrap, else unshare where a probe shows its namespaces work, else
SandboxUnavailable (never none: that runs code unisolated and is used only when named).
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

SANDBOX_CHOICES = ("auto", "bwrap", "unshare", "none")
HARNESS_DIR = Path(__file__).resolve().parents[1] / "inside"  # the only evaluator folder a box sees
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# uids for sandboxed processes when we run as root: one per box, so RLIMIT_NPROC counts per box.
# Each process (by pid) owns a block of UIDS_PER_PROCESS, handed out in turn to its boxes.
UID_BASE = 3_000_000
UIDS_PER_PROCESS = 1024
_next_uid = itertools.count()
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
# The devices a box sees (/dev/shm is a private tmpfs besides): none of them blocks a reader.
DEVICES = ("null", "zero", "full", "random", "urandom")
DEV_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
             ("stderr", "/proc/self/fd/2"))
# A box that drops to its own uid (as root), before the drop: a procfs instance of the box's
# namespace mounted over /proc, entered and detached, is the judge's view of every process (its
# working directory at start: harness_procs.take_process_view); then the box's /proc is remounted
# to show a process only to those who may ptrace-read it: a program sees itself and its own
# children, never the non-dumpable judge or fork server (nor what it made non-dumpable itself).
# Before Linux 5.8 hidepid is one setting per namespace, shared by both mounts: not hidden then.
PROC_STEPS = ("mount -t proc -o nosuid,nodev,noexec proc /proc", "cd /proc", "umount -l /proc",
              "{ mount -o remount,hidepid=ptraceable /proc"
              " || echo 'box: /proc is not hidden (hidepid per mount needs Linux 5.8)' >&2; }")


class SandboxUnavailable(OSError):
    """No sandbox of the asked kind works here: an environment error (the stage contract reports it as
    one line and exit status 2, as it does every OSError)."""


@dataclass(frozen=True)
class Bind:
    host: Path
    inside: str
    writable: bool = False


@dataclass(frozen=True)
class BoxSpec:
    """Sandbox-wide settings of one box (per-run limits travel with each request)."""

    kind: str  # bwrap | unshare | none
    tmp_bytes: int = 256 << 20
    shm_bytes: int = 64 << 20
    nproc: int = 64
    drop_uid: int | None = None  # run as this uid/gid (when we are root); None = as ourselves
    syscall_filter: bool = True  # seccomp filter on every program (see syscall_filter.py)
    cgroups: bool = True  # a run group per box where the machine has control groups (cgroups.py)


def is_root() -> bool:
    return os.geteuid() == 0


def box_uid() -> int:
    """A uid no one else uses, distinct per box of this process, whichever Evaluator the box
    belongs to (RLIMIT_NPROC counts per uid: boxes sharing one would share a fork budget)."""
    return UID_BASE + (os.getpid() % 1_000_000) * UIDS_PER_PROCESS + next(_next_uid) % UIDS_PER_PROCESS


def sandbox_env(home: str) -> dict[str, str]:
    """The whole environment a sandboxed process sees: no tokens, no HF_*, nothing inherited."""
    return {
        "PATH": SANDBOX_PATH, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": home, "TMPDIR": home,
        "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    }


def interpreter_paths() -> list[str]:
    """Directories the project's interpreter needs (prefixes, resolved symlinks), outermost first."""
    paths = {os.path.realpath(p) for p in (sys.base_prefix, sys.prefix, sys.exec_prefix)}
    paths |= {sys.prefix, os.path.dirname(os.path.realpath(sys.executable))}
    covered = [p for p in sorted(paths) if not any(p != q and p.startswith(q + "/") for q in paths)]
    return [p for p in covered if os.path.isdir(p)]


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _overlaps(a: str, b: str) -> bool:
    return _under(a, [b]) or _under(b, [a])


@functools.cache
def mount_root() -> str:
    """The folder under which a bwrap box sees its binds (`<root>/job`, `<root>/inputs`, ...):
    a top-level name that no interpreter path lies under, or a bind would hide the interpreter
    (a checkout at /check/work/... once lost its venv under a bind at /check)."""
    taken = [*interpreter_paths(), *SYSTEM_DIRS, "/tmp", "/dev", "/proc"]
    for i in itertools.count():
        root = "/box" if i == 0 else f"/box{i}"
        if not any(_overlaps(root, p) for p in taken):
            return root
    raise AssertionError("unreachable")


def inside_path(name: str) -> str:
    """Where the bind called `name` (job, inputs, check, build) appears inside a bwrap box."""
    return f"{mount_root()}/{name}"


def bwrap_args(spec: BoxSpec, binds: list[Bind]) -> list[str]:
    args = ["bwrap"]
    visible: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
            visible.append(d)
    made: set[str] = set()

    def parents(path: str) -> None:
        parts = Path(path).parts[1:-1]
        for i in range(len(parts)):
            p = "/" + "/".join(parts[: i + 1])
            if p not in made and not _under(p, visible):
                args.extend(["--perms", "0755", "--dir", p])
                made.add(p)

    # The private /tmp comes before the interpreter binds: a venv that lives under /tmp (a CI
    # checkout there, say) must be bound on top of the tmpfs, not hidden by it.
    args += ["--perms", "0755", "--size", str(1 << 20), "--tmpfs", "/dev"]
    for d in DEVICES:
        if os.path.exists(f"/dev/{d}"):
            args += ["--dev-bind", f"/dev/{d}", f"/dev/{d}"]
    for name, target in DEV_LINKS:
        args += ["--symlink", target, f"/dev/{name}"]
    args += ["--proc", "/proc",
             "--perms", "01777", "--size", str(spec.tmp_bytes), "--tmpfs", "/tmp",
             "--perms", "01777", "--size", str(spec.shm_bytes), "--tmpfs", "/dev/shm"]
    for p in interpreter_paths():
        if not _under(p, visible):
            parents(p)
            args += ["--ro-bind", p, p]
            visible.append(p)
    for b in binds:
        hidden = [p for p in interpreter_paths() if _overlaps(b.inside, p)]
        if hidden:
            raise SandboxUnavailable(f"bind target {b.inside} would hide the interpreter at {hidden[0]} "
                                     "inside the sandbox; use sandbox.inside_path() for bind targets")
        parents(b.inside)
        args += ["--bind" if b.writable else "--ro-bind", str(b.host), b.inside]
    # /dev read-only (not /dev/shm, a mount of its own): in a user namespace it is the sandbox
    # user's, and what a program left there would outlive the run
    args += ["--remount-ro", "/dev", "--remount-ro", "/", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
             "--unshare-cgroup-try", "--hostname", "sandbox", "--die-with-parent", "--new-session",
             "--as-pid-1", "--chdir", "/tmp"]
    if spec.drop_uid is not None:
        # CAP_SYS_ADMIN for the /proc step only: setpriv drops every capability after it
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SYS_ADMIN", "--",
                 "/bin/sh", "-c", " && ".join(PROC_STEPS) + ' && exec "$@"', "sh"]
        return args
    args += ["--unshare-user", "--disable-userns"]
    return args + ["--"]


def unshare_namespace_args(tool: str = "unshare") -> list[str]:
    """The namespaces of an unshare box (and of the probe that checks they work here)."""
    ns = [tool, "--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--ipc", "--uts", "--mount",
          "--propagation", "private"]
    if not is_root():
        ns.insert(1, "--map-root-user")
    return ns


def unshare_args(spec: BoxSpec, scratch: Path, shm: bool, reach: list[Path] = (), stage: Path | None = None,
                 writable: list[Path] = ()) -> list[str]:
    """New namespaces + private tmpfs scratch (and /dev/shm), mounted by a tiny root shell step.
    When the box drops to an unprivileged uid, the `reach` paths (and the interpreter's) that sit
    under a directory it may not enter (/root, 0700) are made reachable inside the box's own mount
    namespace: that directory is covered by an empty tmpfs and only those paths are bound back
    into it (staged first under `stage`), so the rest of it stays hidden."""
    ns = unshare_namespace_args()
    mounts = ["umask 022", *_dev_mounts(scratch, shm),
              f"mount -t tmpfs -o size={spec.tmp_bytes},mode=1777 tmpfs {_q(scratch)}"]
    if shm:
        mounts.append(f"mount -t tmpfs -o size={spec.shm_bytes},mode=1777 tmpfs /dev/shm")
    if spec.drop_uid is not None and stage is not None:
        mounts += _reach_mounts([*interpreter_paths(), *map(str, reach)], stage)
    mounts += _read_only_shared_dirs(writable)
    if spec.drop_uid is not None:  # last: it changes the working directory
        mounts += PROC_STEPS
    return ns + ["/bin/sh", "-c", " && ".join(mounts) + ' && exec "$@"', "sh"]


WORLD_WRITABLE_CANDIDATES = ("/tmp", "/var/tmp", "/run/lock", "/run/shm", "/var/crash", "/var/metrics")


def world_writable_dirs() -> list[str]:
    """The host's folders every user may write to (symlinks such as /var/lock -> /run/lock are
    covered through their target)."""
    found = []
    for d in WORLD_WRITABLE_CANDIDATES:
        try:
            st = os.lstat(d)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_IWOTH:
            found.append(d)
    return found


def _read_only_shared_dirs(writable: list[Path]) -> list[str]:
    """Shell steps that make the host's world-writable folders read-only inside the box, keeping
    the box's own writable binds (each first bound onto itself, so it is a mount of its own
    that `--rbind` carries along and the non-recursive read-only remount leaves alone) and the
    scratch tmpfs (a mount already)."""
    steps = [f"mount --rbind {_q(w)} {_q(w)}" for w in writable]
    for d in world_writable_dirs():
        steps += [f"mount --rbind {_q(d)} {_q(d)}", f"mount -o remount,ro,bind {_q(d)}"]
    return steps


def _dev_mounts(spare: Path, shm: bool) -> list[str]:
    """Shell steps that replace /dev with a tmpfs holding only DEVICES (and /dev/shm's mount
    point): built on `spare` (an empty folder, mounted over later), then moved onto /dev."""
    steps = [f"mount -t tmpfs -o size=1m,mode=0755 tmpfs {_q(spare)}"]
    for d in DEVICES:
        if os.path.exists(f"/dev/{d}"):
            steps += [f"touch {_q(spare / d)}", f"mount --bind /dev/{d} {_q(spare / d)}"]
    steps += [f"ln -s {target} {_q(spare / name)}" for name, target in DEV_LINKS]
    if shm:
        steps.append(f"mkdir {_q(spare / 'shm')}")
    # In a user namespace util-linux reports a failure after the move itself took effect (a step
    # after it is refused): the move counts when `spare` is no longer a mount point. Read-only
    # per mount (`bind`): a user namespace may not remount the tmpfs itself.
    return steps + [f"{{ mount --move {_q(spare)} /dev 2>/dev/null || ! mountpoint -q {_q(spare)}; }}",
                    "mount -o remount,ro,bind /dev"]


def _q(path: str | Path) -> str:
    return shlex.quote(str(path))


def closed_ancestor(path: str) -> str | None:
    """The outermost directory above `path` that other users may not enter (no o+x), or None."""
    parts = Path(os.path.abspath(path)).parts
    for i in range(2, len(parts)):
        d = os.path.join(*parts[:i])
        try:
            if not os.stat(d).st_mode & stat.S_IXOTH:
                return d
        except OSError:
            return None
    return None


def staging_dir(preferred: Path) -> Path | None:
    """A root-only folder for `_reach_mounts` to stage binds in: `preferred` unless it sits under a
    closed directory (which the cover would hide), else a new one in an open temp location."""
    if closed_ancestor(str(preferred)) is None:
        preferred.mkdir(mode=0o700, exist_ok=True)
        return preferred
    for base in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(base) and closed_ancestor(base + "/x") is None:
            return Path(tempfile.mkdtemp(prefix="microcoder-stage-", dir=base))
    return None


def _reach_mounts(paths: list[str], stage: Path) -> list[str]:
    """Shell steps that cover each closed directory above `paths` with an empty tmpfs and bind
    the paths back into it. `--rbind` keeps mounts inside a path (the scratch tmpfs)."""
    paths = list(dict.fromkeys(os.path.abspath(p) for p in paths))
    covers: dict[str, list[str]] = {}
    for p in paths:
        top = closed_ancestor(p)
        if top is not None and not any(_under(p, [q]) and p != q for q in paths if closed_ancestor(q) == top):
            covers.setdefault(top, []).append(p)
    if any(_under(str(stage), [top]) for top in covers):
        raise SandboxUnavailable(f"the staging folder {stage} would be hidden under {list(covers)}")
    cmds: list[str] = []
    for k, (top, inner) in enumerate(covers.items()):
        for i, p in enumerate(inner):
            cmds += [f"mkdir -p {_q(stage / f'{k}-{i}')}", f"mount --rbind {_q(p)} {_q(stage / f'{k}-{i}')}"]
        cmds.append(f"mount -t tmpfs -o size=1m,mode=0755 tmpfs {_q(top)}")
        for i, p in enumerate(inner):
            cmds += [f"mkdir -p {_q(p)}", f"mount --rbind {_q(stage / f'{k}-{i}')} {_q(p)}"]
    return cmds


def drop_args(spec: BoxSpec) -> list[str]:
    if spec.drop_uid is None:
        return []
    uid = str(spec.drop_uid)
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--pdeathsig", "keep", "--"]


def limit_args(spec: BoxSpec) -> list[str]:
    """Sandbox-wide rlimits, set inside the namespaces (so NPROC counts per box). Each run sets
    its own CPU / memory / file limits below these."""
    if not shutil.which("prlimit"):
        log.warning("prlimit (util-linux) is missing: no process-count limit inside the sandbox")
        return []
    # Not RLIMIT_STACK: glibc takes the judge's stack limit at start-up as the default thread stack
    # size of every forked Python child (a big one makes `threading.Thread().start()` fail).
    return ["prlimit", f"--nproc={spec.nproc}:{spec.nproc}", "--core=0:0", "--"]


def harness_command(harness_path: str, python: str = sys.executable) -> list[str]:
    """The judge process, `harness.py` imported as a module rather than run as a script, so its
    bytecode comes from `__pycache__` when there (`make setup` writes it) instead of being
    compiled at every start (~6 ms of the ~90 ms a judge takes to start)."""
    folder, name = os.path.split(harness_path)
    name = name.removesuffix(".py")
    code = f"import sys; sys.path.insert(0, {folder!r}); import {name}; {name}.main()"
    return [python, "-s", "-P", "-c", code]


INSTALL_BWRAP = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; `make setup` does it as root)"
UNSHARE_PROBE_TIMEOUT_S = 10.0
NONE_WARNING = ("sandbox='none' (set explicitly): submissions run with rlimits only, NOT isolated; "
                "for tests only, never for untrusted code")
UNSHARE_WARNING = ("bubblewrap (bwrap) is not installed: sandboxing falls back to unshare namespaces + "
                   "rlimits; the host filesystem stays visible to submissions. Install bubblewrap.")


@functools.cache
def _probe_unshare(tool: str, root: bool) -> str | None:
    """Whether the namespaces an unshare box makes (`unshare_namespace_args`) and a tmpfs mount in
    them work here: None when they do, else why not (one line). Once per tool and uid kind."""
    target = tempfile.mkdtemp(prefix="microcoder-probe-")
    cmd = [*unshare_namespace_args(tool), "/bin/sh", "-c", f"mount -t tmpfs -o size=1m tmpfs {_q(target)}"]
    shown = " ".join(["unshare", *cmd[1:cmd.index("/bin/sh")]])
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                           timeout=UNSHARE_PROBE_TIMEOUT_S, env={"PATH": SANDBOX_PATH, "LC_ALL": "C.UTF-8"})
    except subprocess.TimeoutExpired:
        return f"unshare namespaces do not work here (`{shown}` took over {UNSHARE_PROBE_TIMEOUT_S:g} s)"
    except OSError as e:
        return f"unshare namespaces do not work here (`{shown}`: {e})"
    finally:
        shutil.rmtree(target, ignore_errors=True)
    if r.returncode != 0:
        why = " ".join((r.stderr or r.stdout).split())[:300] or "no message"
        return f"unshare namespaces do not work here (`{shown}` exited {r.returncode}: {why})"
    return None


def unshare_problem() -> str | None:
    """None when the unshare sandbox works here, else why not (one line)."""
    tool = shutil.which("unshare")
    if tool is None:
        return "the unshare tool (util-linux) is not installed"
    return _probe_unshare(tool, is_root())


def available(kind: str) -> bool:
    """Whether sandbox `kind` can be used here (unshare: present and its namespaces work)."""
    if kind == "none":
        return True
    if kind == "unshare":
        return unshare_problem() is None
    return shutil.which(kind) is not None


def resolve_kind(requested: str) -> tuple[str, str | None]:
    """The sandbox to use and a warning when it is weaker than bwrap. Fails closed: 'auto' is
    bwrap, else unshare where its namespaces work, else SandboxUnavailable; 'none' (no isolation)
    only when asked for by name."""
    if requested not in SANDBOX_CHOICES:
        raise ValueError(f"sandbox must be one of {SANDBOX_CHOICES}, got {requested!r}")
    if requested == "none":
        return "none", NONE_WARNING
    have_bwrap = shutil.which("bwrap") is not None
    if requested == "bwrap":
        if not have_bwrap:
            raise SandboxUnavailable(f"sandbox='bwrap' but bubblewrap (bwrap) is not installed: {INSTALL_BWRAP}")
        return "bwrap", None
    if requested == "unshare":
        problem = unshare_problem()
        if problem is not None:
            raise SandboxUnavailable(f"sandbox='unshare' but {problem}")
        return "unshare", None
    if have_bwrap:
        return "bwrap", None
    problem = unshare_problem()
    if problem is None:
        return "unshare", UNSHARE_WARNING
    raise SandboxUnavailable(f"no sandbox: bubblewrap (bwrap) is not installed and {problem}; {INSTALL_BWRAP} "
                             "(the evaluator never runs submissions unisolated unless sandbox='none' is set)")


def drop_uid_for(kind: str, slot: int | None = None) -> int | None:
    """The uid a new box runs as (None: as ourselves). `slot` is not used any more (uids are handed
    out per box by `box_uid`); it stays for existing callers."""
    if kind == "none" or not is_root():
        return None
    if not shutil.which("setpriv"):
        log.warning("setpriv (util-linux) is missing: sandboxed code runs as root and RLIMIT_NPROC cannot hold")
        return None
    return box_uid()

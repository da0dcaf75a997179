"""What a run leaves behind, removed by handle (stdlib only; imported by harness.py in the sandbox),
and the judge's side of the box's control group (`cgroups.py`).

Cleaning must not depend on paths or permissions the program controls:
- Files: every step is relative to an open directory descriptor (`unlinkat`, `renameat`), so a
  directory chain deeper than PATH_MAX, or directories whose permissions the program removed,
  cannot make the wipe fail. A non-empty directory's subdirectories are moved up to the top
  before it is removed: the work is linear in the number of entries, and only two descriptors
  are ever open however deep the chain.
- System V IPC objects: removed by id, listed from /proc/sysvipc (which needs no permission);
  `ipcrm --all` asks IPC_STAT first and skips an object whose mode the program set to 0. The
  objects were created under the judge's own uid, and the creator may always remove them,
  whatever owner and mode the program set since.
Each returns False when something is left: the judge then retires and the parent starts a fresh
one (a box is never reused dirty).
"""

import itertools
import os
import re

IPC_RMID = 0
_names = itertools.count()


def _hoist_and_remove(top, name):
    """Remove directory `name` (in `top`): its files now, its subdirectories moved up to `top`
    (removed on a later pass). False if it could not be opened or removed."""
    try:
        os.chmod(name, 0o700, dir_fd=top)  # a directory (rmdir said ENOTEMPTY): no symlink to follow
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
    except OSError:
        return False
    try:
        for sub in os.listdir(fd):
            try:
                os.unlink(sub, dir_fd=fd)
                continue
            except IsADirectoryError:
                pass
            except OSError:
                continue
            try:
                os.chmod(sub, 0o700, dir_fd=fd)  # moving a directory rewrites its ".."
                os.rename(sub, f".wipe-{next(_names)}", src_dir_fd=fd, dst_dir_fd=top)
            except OSError:
                pass
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=top)
        return True
    except OSError:
        return False


_MOUNTS = {}  # path -> _holding_mounts(path), read at the judge's first clean-up


def _holding_mounts(path):
    """Top-level names under `path` that are, or hold, a mount point: the sandbox's own binds (a
    checkout under /tmp has its interpreter bound at /tmp/...). They are not the program's (the
    folders the sandbox made for them are root's and read-only to it), and cannot be removed.
    Read once per path, at the judge's first clean-up (before any program ran): the mount table
    is the sandbox's, which a program cannot change (no mount syscalls), and reading it after
    every run cost ~0.2 ms. A mount that appeared later anyway is not kept: the wipe fails on
    it and the judge retires."""
    if path not in _MOUNTS:
        _MOUNTS[path] = _read_holding_mounts(path)
    return _MOUNTS[path]


def _read_holding_mounts(path):
    try:
        with open("/proc/self/mountinfo") as f:
            rows = f.read().splitlines()
    except OSError:
        return set()
    prefix = path.rstrip("/") + "/"
    keep = set()
    for row in rows:
        fields = row.split()
        if len(fields) > 4:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if point.startswith(prefix):
                keep.add(point[len(prefix):].split("/")[0])
    return keep


def empty_dir(path):
    """Remove everything inside `path` (not `path` itself). True when it is empty (or absent)."""
    try:
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    keep = _holding_mounts(path)
    try:
        while True:
            names = [n for n in os.listdir(top) if n not in keep]
            if not names:
                return True
            progress = False
            for name in names:
                try:
                    os.unlink(name, dir_fd=top)
                    progress = True
                    continue
                except IsADirectoryError:
                    pass
                except FileNotFoundError:
                    continue
                except OSError:
                    continue  # e.g. another uid's file under a sticky top: left, reported below
                try:
                    os.rmdir(name, dir_fd=top)
                    progress = True
                    continue
                except OSError:
                    pass
                if _hoist_and_remove(top, name):
                    progress = True
            if not progress:
                return not os.listdir(top)
    finally:
        os.close(top)


def wipe(dirs):
    """Empty the private writable dirs; False if something could not be removed."""
    clean = True
    for d in dirs:
        clean = empty_dir(d) and clean
    return clean


def _ipc_ids(kind):
    """Ids of the System V IPC objects of `kind` (shm | sem | msg) in this IPC namespace."""
    try:
        with open(f"/proc/sysvipc/{kind}") as f:
            rows = f.read().splitlines()[1:]
    except OSError:
        return []
    ids = []
    for row in rows:
        fields = row.split()
        if len(fields) > 1 and fields[1].isdigit():
            ids.append(int(fields[1]))
    return ids


def clear_ipc():
    """Remove every System V IPC object left in the sandbox's private IPC namespace, by id.
    True when none is left."""
    found = {kind: _ipc_ids(kind) for kind in ("shm", "sem", "msg")}
    if not any(found.values()):
        return True
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    remove = {"shm": lambda i: libc.shmctl(i, IPC_RMID, None),
              "sem": lambda i: libc.semctl(i, 0, IPC_RMID),
              "msg": lambda i: libc.msgctl(i, IPC_RMID, None)}
    for kind, ids in found.items():
        for i in ids:
            remove[kind](i)
    return not any(_ipc_ids(kind) for kind in found)


# --- the box's control group ----------------------------------------------------------------------------
class RunGroupFds:
    """Descriptors the evaluator opened on the box's run group (see cgroups.py): `procs`, the
    `cgroup.procs` files a child writes "0" to (moving itself in); `cpu`, the CPU counter."""

    def __init__(self, spec):
        self.procs = [int(fd) for fd in spec.get("procs", [])]
        self.cpu = spec.get("cpu")
        self.version = spec.get("version")
        self.memory = {k: int(v) for k, v in (spec.get("memory") or {}).items()}

    def _read(self, key):
        return os.pread(self.memory[key], 4096, 0)

    def oom_kills(self):
        text = self._read("events").decode()
        return next((int(line[9:]) for line in text.splitlines() if line.startswith("oom_kill ")), 0)

    def mark(self):
        """Before a program starts: what the group holds and its kill count so far (None
        without memory counters)."""
        if not self.memory:
            return None
        return int(self._read("usage")), self.oom_kills()

    def figures(self, mark, limit=None, known_kills=None):
        """The reply's memory figures since `mark`: the run's peak above what the group held
        before it (every process of it, files in /tmp and /dev/shm, an exec'd image: the
        group's own count; the parent reset the peak before the request), and its out-of-memory
        kills. Per functional call the kill count is read only when the peak came within a MB of
        `limit` (a kill happens at the group's limit, which is `limit` on top of what it held):
        `known_kills` stands otherwise (one read per call, not two)."""
        if mark is None:
            return {}
        peak = max(0, int(self._read("peak")) - mark[0])
        if limit is None or known_kills is None or peak >= limit - (1 << 20):
            known_kills = self.oom_kills() - mark[1]
        return {"group_peak_kb": peak // 1024, "group_oom_kills": known_kills}

    def cpu_s(self):
        data = os.pread(int(self.cpu), 4096, 0)
        if self.version == "cgroup-v2":
            for line in data.decode().splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
            return 0.0
        return int(data) / 1e9

    def probe(self):
        """None when a forked child can move itself into the group and the counter reads;
        else why not (the box then judges with rlimits only)."""
        try:
            self.cpu_s()
        except (OSError, ValueError) as e:
            return f"cannot read the CPU counter: {e!r}"
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                for fd in self.procs:
                    os.write(fd, b"0")
                os._exit(0)
            except BaseException as e:  # noqa: BLE001
                try:
                    os.write(w, repr(e).encode()[:500])
                finally:
                    os._exit(1)
        os.close(w)
        _, status = os.waitpid(pid, 0)
        why = os.read(r, 1000).decode("utf-8", "replace")
        os.close(r)
        if os.waitstatus_to_exitcode(status) != 0:
            return why or f"probe child ended with status {status}"
        return None

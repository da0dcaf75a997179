"""A seccomp filter for sandboxed programs (stdlib only; imported by the harness inside the sandbox).

The judge process and the programs it forks share a uid, so without a filter a program could
reach the judge (its PID 1) through the few syscalls that only check uids, not ptrace rights:
`prlimit(1, ...)` lowering the judge's limits, `setpriority` / `sched_setscheduler` /
`sched_setaffinity` / `ioprio_set` on it. Everything the judge forks later inherits those, so
one submission would change the verdicts of the next ones. The filter lets these calls target
the caller only. It also refuses kernel keyrings (per-uid storage that outlives a run, i.e. a
channel to the next submission), new namespaces (user namespaces are kernel attack surface), and
access to other processes' memory (ptrace, process_vm_*, kcmp, pidfd_getfd), perf, bpf,
userfaultfd and io_uring, none of which a solution needs.

Sockets: only the families a solution needs, AF_UNIX and (loopback only, in the sandbox's empty
network namespace) AF_INET / AF_INET6; any other family answers EAFNOSUPPORT, as on a kernel
without it. Some families are not isolated by a network namespace at all (AF_VSOCK reaches the
host's vsock port space, where VM agents listen) and others are kernel attack surface
(AF_NETLINK, AF_PACKET, ...).

`clone3` answers ENOSYS (glibc then falls back to `clone`, whose flags a filter can read), as in
Docker's default profile. Syscalls of another ABI (x32, i386 on x86_64) answer ENOSYS.
"""

import errno
import platform
import struct

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_BIT = 0x40000000

# name: (x86_64, aarch64 / asm-generic)
SYSCALLS = {
    "prlimit64": (302, 261), "setpriority": (141, 140), "sched_setparam": (142, 118),
    "sched_setscheduler": (144, 119), "sched_setaffinity": (203, 122), "sched_setattr": (314, 274),
    "ioprio_set": (251, 30), "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "unshare": (272, 97), "setns": (308, 268), "clone": (56, 220), "clone3": (435, 435),
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "kcmp": (312, 272), "pidfd_getfd": (438, 438), "perf_event_open": (298, 241), "bpf": (321, 280),
    "userfaultfd": (323, 282), "io_uring_setup": (425, 425), "socket": (41, 198), "socketpair": (53, 199),
}
DENIED = ("keyctl", "add_key", "request_key", "unshare", "setns", "ptrace", "process_vm_readv",
          "process_vm_writev", "kcmp", "pidfd_getfd", "perf_event_open", "bpf", "userfaultfd",
          "io_uring_setup")
SELF_ONLY = ("prlimit64", "sched_setparam", "sched_setscheduler", "sched_setaffinity", "sched_setattr")
CLONE_NAMESPACES = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
SOCKET_FAMILIES = (AF_UNIX, AF_INET, AF_INET6)  # socket(); socketpair() exists for AF_UNIX only

# classic BPF
LD_ABS_W, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
NR, ARCH = 0, 4


def _arg(i):
    """Offset of the low 32 bits of syscall argument i in struct seccomp_data (little endian)."""
    return 16 + 8 * i


class _Assembler:
    """Classic BPF with forward jumps to named labels."""

    def __init__(self):
        self.code, self.labels = [], {}

    def ld(self, offset):
        self.code.append((LD_ABS_W, None, None, offset))

    def jump(self, op, k, jt, jf):
        """Compare the accumulator with k; jt / jf: a label, or None for the next instruction."""
        self.code.append((op, jt, jf, k))

    def ret(self, value):
        self.code.append((RET, None, None, value))

    def label(self, name):
        self.labels[name] = len(self.code)

    def assemble(self):
        out = []
        for i, (op, jt, jf, k) in enumerate(self.code):
            offsets = []
            for target in (jt, jf):
                off = 0 if target is None else self.labels[target] - i - 1
                if not 0 <= off <= 255:
                    raise ValueError(f"BPF jump out of range at {i}")
                offsets.append(off)
            out.append(struct.pack("=HBBI", op, offsets[0], offsets[1], k))
        return b"".join(out)


def build(machine=None):
    """The filter as bytes (an array of struct sock_filter), or None for an unknown architecture."""
    machine = machine or platform.machine()
    if machine in ("amd64", "x86-64"):
        machine = "x86_64"
    if machine == "arm64":
        machine = "aarch64"
    if machine not in AUDIT_ARCH:
        return None
    col = 0 if machine == "x86_64" else 1
    nr = {name: numbers[col] for name, numbers in SYSCALLS.items()}
    a = _Assembler()
    a.ld(ARCH)
    a.jump(JEQ, AUDIT_ARCH[machine], None, "enosys")
    a.ld(NR)
    if machine == "x86_64":
        a.jump(JGE, X32_BIT, "enosys", None)
    for name in DENIED:
        a.jump(JEQ, nr[name], "eperm", None)
    a.jump(JEQ, nr["clone3"], "enosys", None)
    a.jump(JEQ, nr["clone"], "clone", None)
    for name in SELF_ONLY:
        a.jump(JEQ, nr[name], "arg0_is_zero", None)
    a.jump(JEQ, nr["setpriority"], "setpriority", None)
    a.jump(JEQ, nr["ioprio_set"], "ioprio_set", None)
    a.jump(JEQ, nr["socket"], "socket", None)
    a.jump(JEQ, nr["socketpair"], "socketpair", None)
    a.ret(RET_ALLOW)
    a.label("socket")  # the family is argument 0 (an int: the low 32 bits)
    a.ld(_arg(0))
    for family in SOCKET_FAMILIES:
        a.jump(JEQ, family, "allow", None)
    a.ret(RET_ERRNO | errno.EAFNOSUPPORT)
    a.label("socketpair")
    a.ld(_arg(0))
    a.jump(JEQ, AF_UNIX, "allow", None)
    a.ret(RET_ERRNO | errno.EAFNOSUPPORT)
    a.label("clone")
    a.ld(_arg(0))
    a.jump(JSET, CLONE_NAMESPACES, "eperm", "allow")
    a.label("setpriority")
    a.ld(_arg(0))
    a.jump(JEQ, PRIO_PROCESS, "arg1_is_zero", "eperm")
    a.label("ioprio_set")
    a.ld(_arg(0))
    a.jump(JEQ, IOPRIO_WHO_PROCESS, "arg1_is_zero", "eperm")
    a.label("arg1_is_zero")  # pid_t / id_t: the kernel reads the low 32 bits only
    a.ld(_arg(1))
    a.jump(JEQ, 0, "allow", "eperm")
    a.label("arg0_is_zero")
    a.ld(_arg(0))
    a.jump(JEQ, 0, "allow", "eperm")
    a.label("allow")
    a.ret(RET_ALLOW)
    a.label("eperm")
    a.ret(RET_ERRNO | errno.EPERM)
    a.label("enosys")
    a.ret(RET_ERRNO | errno.ENOSYS)
    return a.assemble()


class Installer:
    """Built once in the judge process. `install()` runs once in the judge itself after its
    start, so every child it forks inherits the filter; where that fails, in each child right
    before it becomes the program (ctypes and the program stay in memory for it)."""

    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2

    def __init__(self):
        import ctypes

        program = build()
        if program is None:
            raise OSError(f"no syscall table for architecture {platform.machine()!r}")

        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        self._ctypes = ctypes
        self._buf = ctypes.create_string_buffer(program, len(program))
        self._prog = SockFprog(len(program) // 8, ctypes.addressof(self._buf))
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]

    def install(self):
        """Raises OSError when the kernel refuses (the caller must not run the program then)."""
        if self._libc.prctl(self.PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
            raise OSError(self._ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if self._libc.prctl(self.PR_SET_SECCOMP, self.SECCOMP_MODE_FILTER, self._ctypes.byref(self._prog), 0, 0) != 0:
            raise OSError(self._ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")

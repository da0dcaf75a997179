"""The network from inside the real sandbox (bubblewrap): an empty network namespace (nothing on
the host is reachable), and a syscall filter that allows only the socket families a solution
needs."""

from __future__ import annotations

import socket

import pytest
from sandbox_fixtures import FAST, SLOW_OK, evaluator_fixture, judge, needs_bwrap, run, sub

from microcoder.pipeline.schema import Problem, TestCase

ev = evaluator_fixture("ev", 2, **FAST)
solo = evaluator_fixture("solo", 1, **SLOW_OK)


@needs_bwrap
def test_network_is_unreachable(ev):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.2)
        port = server.getsockname()[1]
        v = run(ev, f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=1).close()
                print("connected")
            except OSError:
                print(42)
        """)
        assert v.status == "AC", v
        with pytest.raises(TimeoutError):
            server.accept()


SOCKETS = """
    import socket
    def attempt(family, kind, proto=0):
        try:
            socket.socket(family, kind, proto).close()
            return "ok"
        except OSError as e:
            return "denied"
    got = {
        "unix": attempt(socket.AF_UNIX, socket.SOCK_STREAM),
        "inet": attempt(socket.AF_INET, socket.SOCK_STREAM),
        "inet6": attempt(socket.AF_INET6, socket.SOCK_DGRAM),
        "vsock": attempt(socket.AF_VSOCK, socket.SOCK_STREAM),
        "netlink": attempt(socket.AF_NETLINK, socket.SOCK_RAW),
        "packet": attempt(socket.AF_PACKET, socket.SOCK_RAW),
    }
    print(got)
"""
SOCKETS_PROBLEM = Problem(id="sockets", source="test", statement="", style="stdio", time_limit_s=2.0, tests=[
    TestCase("", "{'unix': 'ok', 'inet': 'ok', 'inet6': 'ok', 'vsock': 'denied', 'netlink': 'denied', "
                 "'packet': 'denied'}\n")])


@needs_bwrap
def test_only_the_socket_families_a_solution_needs(solo):
    v = judge(solo, SOCKETS_PROBLEM, sub(SOCKETS_PROBLEM, SOCKETS))
    assert v.status == "AC", v

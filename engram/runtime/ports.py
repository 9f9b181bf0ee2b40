"""TCP ports: free ones for the servers `engram up` starts, and the listening socket of a configured one."""

from __future__ import annotations

import errno
import socket
from contextlib import ExitStack

from engram.errors import EngramError


class CannotListen(EngramError):
    """A server cannot listen where its settings say; ``field`` names the setting to change."""

    code = "cannot_listen"


def listen(host: str, port: int, *, host_setting: str, port_setting: str) -> socket.socket:
    """A socket listening on ``host``:``port``, for a server to serve on. A port in use, or an address that cannot
    be bound, raises ``CannotListen`` naming the setting to change."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not socket.create_server's 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    # connections whose socket says TCP, and with it on every HTTP response written in two parts (headers, then
    # body) waited for the client's delayed ACK, about 40 ms a request.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if family == socket.AF_INET6:  # IPv6 only, as socket.create_server would have it
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((host, port))
        sock.listen(2048)
        return sock
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise CannotListen(
                f"port {port} on {host} is already in use; set {port_setting} to a free port "
                "or stop what listens there",
                field=port_setting,
            ) from exc
        raise CannotListen(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); check {host_setting} and {port_setting}",
            field=host_setting,
        ) from exc


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port that is free on ``host`` right now (the OS picks it)."""
    return free_ports(1, host)[0]


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct TCP ports free on ``host`` right now.

    Every socket stays bound until all are picked: asking one at a time lets the OS hand the same port out
    twice once the first socket is closed, and two services would then race for it.
    """
    with ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))
            ports.append(int(sock.getsockname()[1]))
        return ports

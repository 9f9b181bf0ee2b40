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
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as exc:
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

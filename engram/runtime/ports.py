"""Free TCP ports for the servers `engram up` starts."""

from __future__ import annotations

import socket
from contextlib import ExitStack


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

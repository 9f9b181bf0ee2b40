"""Free TCP ports for the servers `engram up` starts."""

from __future__ import annotations

import socket


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])

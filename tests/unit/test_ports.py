"""Ports handed to the servers `engram up` starts never collide."""

from __future__ import annotations

import socket

from engram.runtime.ports import free_ports


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(64)
    assert len(set(ports)) == 64
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", ports[0]))  # released when free_ports returned

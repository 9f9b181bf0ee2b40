"""Ports handed to the servers `engram up` starts never collide."""

from __future__ import annotations

import asyncio
import socket

from engram.runtime.ports import free_port, free_ports, listen


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(64)
    assert len(set(ports)) == 64
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", ports[0]))  # released when free_ports returned


async def test_a_connection_to_the_listening_socket_has_nagle_off_on_the_server_side() -> None:
    """A server serving on ``listen``'s socket (the gateway's uvicorn) writes a response in two parts; with
    Nagle's algorithm on, the second waited for the client's delayed ACK (~40 ms a request)."""
    sock = listen("127.0.0.1", free_port(), host_setting="H", port_setting="P")
    nodelay: list[int] = []

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nodelay.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(accepted, sock=sock)
    try:
        _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        for _ in range(100):
            if nodelay:
                break
            await asyncio.sleep(0.01)
        writer.close()
    finally:
        server.close()
        await server.wait_closed()
    assert nodelay == [1]

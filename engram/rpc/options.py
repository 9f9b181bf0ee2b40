"""The channel and server options every Engram gRPC endpoint shares."""

from __future__ import annotations

from engram.config import GRPC_MAX_MESSAGE_BYTES


def message_limits(max_bytes: int = GRPC_MAX_MESSAGE_BYTES) -> list[tuple[str, int]]:
    """Explicit send and receive limits, the same on both ends: gRPC's defaults (4 MiB in, no limit out)
    differ, so a large reply could be sent and then refused ``RESOURCE_EXHAUSTED`` by its receiver."""
    return [("grpc.max_send_message_length", max_bytes), ("grpc.max_receive_message_length", max_bytes)]

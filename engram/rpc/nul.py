"""Where a request message holds the NUL character (U+0000), which PostgreSQL text and jsonb cannot store.

The gateway refuses such a body before it reaches a service (``services/gateway/media.py``); a client calling a
service's gRPC port directly gets the same answer from the edge: when PostgreSQL refuses a character, the edge
looks for a NUL in the request and names its field the way the gateway does (``content``, ``tags[1]``,
``metadata.k``). Walking the message only after such an error keeps the check off every other call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import asyncpg
from google.protobuf.message import Message

NUL = "\x00"
NO_NUL = "{where} must not contain the NUL character (U+0000)"
REFUSED_CHARACTER = (
    asyncpg.CharacterNotInRepertoireError,  # 22021: text holding 0x00 ("invalid byte sequence for encoding UTF8")
    asyncpg.UntranslatableCharacterError,  # 22P05: jsonb holding \u0000 ("unsupported Unicode escape sequence")
)
"""What PostgreSQL raises for a NUL in a statement's text or jsonb argument."""


def nul_path(message: Message, prefix: str = "") -> str | None:
    """The dotted path of the first string (value, map key or Struct key) holding a NUL in ``message``, else None."""
    name = message.DESCRIPTOR.full_name
    if name == "google.protobuf.Struct":
        return _in_mapping(message.fields, prefix)
    if name == "google.protobuf.Value":
        return _in_value(message, prefix)
    if name == "google.protobuf.ListValue":
        return _in_sequence(message.values, prefix)
    for field, value in message.ListFields():
        path = f"{prefix}.{field.name}" if prefix else field.name
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            found = _in_mapping(value, path)
        elif field.is_repeated:
            found = _in_sequence(value, path)
        else:
            found = _in(value, path)
        if found:
            return found
    return None


def _in(value: object, path: str) -> str | None:
    if isinstance(value, str):
        return path if NUL in value else None
    if isinstance(value, Message):
        return nul_path(value, path)
    return None


def _in_sequence(values: Iterable[object], path: str) -> str | None:
    for index, value in enumerate(values):
        found = _in(value, f"{path}[{index}]")
        if found:
            return found
    return None


def _in_mapping(mapping: Mapping[object, object], path: str) -> str | None:
    for key, value in mapping.items():
        where = f"{path}.{key}" if path else str(key)
        if isinstance(key, str) and NUL in key:
            return where
        found = _in(value, where)
        if found:
            return found
    return None


def _in_value(value: Message, path: str) -> str | None:
    which = value.WhichOneof("kind")
    if which == "string_value":
        return path if NUL in value.string_value else None
    if which in ("struct_value", "list_value"):
        return nul_path(getattr(value, which), path)
    return None

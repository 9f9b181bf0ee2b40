"""Rules a memory must satisfy before anything is written. Each failure names the field and the rule."""

from __future__ import annotations

import json
import math
import sys
import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from engram.domain.values import SourceType, Visibility
from engram.errors import NotFound, ValidationFailed

MAX_TAGS = 32
MAX_TAG_LENGTH = 64
MAX_LABEL_LENGTH = 200
NOT_A_DOUBLE = "{where} must be a finite number within ±1.8e308 (JSON has no NaN or infinity)"


def validate_content(content: str, max_bytes: int) -> None:
    if not content or not content.strip():
        raise ValidationFailed("content must not be empty", field="content")
    size = len(content.encode("utf-8"))
    if size > max_bytes:
        raise ValidationFailed(f"content is {size} bytes; the limit is {max_bytes}", field="content")


def validate_importance(importance: float | None) -> None:
    if importance is not None and not 0.0 <= importance <= 1.0:
        raise ValidationFailed(f"importance must be between 0 and 1, got {importance}", field="importance")


def validate_tags(tags: list[str]) -> list[str]:
    if len(tags) > MAX_TAGS:
        raise ValidationFailed(f"at most {MAX_TAGS} tags", field="tags")
    clean = []
    for tag in tags:
        tag = tag.strip()
        if not tag or len(tag) > MAX_TAG_LENGTH:
            raise ValidationFailed(f"each tag must be 1–{MAX_TAG_LENGTH} characters", field="tags")
        if tag not in clean:
            clean.append(tag)
    return clean


def validate_choice(value: str, allowed: Iterable[str], field: str) -> None:
    """``value`` is one of ``allowed`` (a value set from ``engram.domain.values``, or a subset of one)."""
    choices = tuple(str(choice) for choice in allowed)
    if value not in choices:
        raise ValidationFailed(f"{field} must be one of {', '.join(choices)}; got {value!r}", field=field)


def validate_source_type(value: str) -> None:
    validate_choice(value, SourceType, "source_type")


def validate_visibility(value: str) -> None:
    validate_choice(value, Visibility, "visibility")


def validate_label(value: str, field: str) -> None:
    if len(value) > MAX_LABEL_LENGTH:
        raise ValidationFailed(f"{field} must be at most {MAX_LABEL_LENGTH} characters", field=field)


def _not_a_double(value: Any) -> bool:
    """A number no JSON document or protobuf Struct (doubles) holds: NaN, an infinity, an integer beyond ±1.8e308."""
    if isinstance(value, float):
        return not math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > sys.float_info.max


# A place in a walked value: the key or index that reached it, whether that was an index, and its parent's place.
_Place = tuple[Any, bool, "_Place"] | None


def _path(place: _Place, root: str) -> str:
    parts: list[str] = []
    while place is not None:
        key, indexed, place = place
        parts.append(f"[{key}]" if indexed else f".{key}")
    return root + "".join(reversed(parts))


def metadata_shape(value: Any, path: str = "metadata") -> tuple[int, str | None]:
    """In one walk without recursion (hostile nesting cannot exhaust the stack): how deeply objects and lists nest
    in ``value`` (a scalar is 0, ``{}`` is 1), and the dotted path of the first number no double holds
    (``_not_a_double``), else None. Paths are spelt only for that number, not for every place walked."""
    deepest = 0
    bad: str | None = None
    stack: list[tuple[Any, int, _Place]] = [(value, 0, None)]
    while stack:
        node, depth, place = stack.pop()
        if isinstance(node, dict):
            stack.extend((child, depth + 1, (key, False, place)) for key, child in node.items())
        elif isinstance(node, list):
            stack.extend((child, depth + 1, (i, True, place)) for i, child in enumerate(node))
        else:
            if bad is None and _not_a_double(node):
                bad = _path(place, path)
            continue
        deepest = max(deepest, depth + 1)
    return deepest, bad


def metadata_depth(value: Any) -> int:
    """How deeply objects and lists nest in ``value`` (``metadata_shape``)."""
    return metadata_shape(value)[0]


def unrepresentable_number_at(value: Any, path: str = "metadata") -> str | None:
    """The dotted path of the first number in ``value`` that no double holds, else None (``metadata_shape``)."""
    return metadata_shape(value, path)[1]


def validate_metadata(metadata: dict[str, Any], max_bytes: int, max_depth: int) -> None:
    """``metadata`` nests at most ``max_depth`` objects and lists, is at most ``max_bytes`` as compact JSON, and
    holds only numbers a double can (Python's JSON parser reads ``NaN``, ``1e400`` as infinity and integers of
    any size; PostgreSQL's jsonb refuses the first two and the Struct carrying metadata holds doubles)."""
    depth, where = metadata_shape(metadata)
    if depth > max_depth:
        raise ValidationFailed(f"metadata nests {depth} levels deep; the limit is {max_depth}", field="metadata")
    if where is not None:
        raise ValidationFailed(NOT_A_DOUBLE.format(where=where), field=where)
    size = metadata_bytes(metadata)
    if size > max_bytes:
        raise ValidationFailed(f"metadata is {size} bytes as JSON; the limit is {max_bytes}", field="metadata")


def metadata_bytes(metadata: dict[str, Any] | None) -> int:
    """The size of ``metadata`` as compact JSON in UTF-8 (0 when empty): what it weighs in an answer."""
    if not metadata:
        return 0
    return len(json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8"))


def validate_source_uri(value: str, max_length: int) -> None:
    if len(value) > max_length:
        raise ValidationFailed(f"source_uri is {len(value)} characters; the limit is {max_length}", field="source_uri")


def validate_validity(valid_from: datetime | None, valid_to: datetime | None) -> None:
    if valid_from is not None and valid_to is not None and valid_to < valid_from:
        raise ValidationFailed("valid_to must not be before valid_from", field="valid_to")


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def require_uuid(value: str, field: str) -> None:
    """A field that must hold a UUID: 422 naming it otherwise."""
    if not is_uuid(value):
        raise ValidationFailed(f"{field} must be a UUID", field=field)


def require_item_id(value: str) -> None:
    """An item id in a path: anything but a UUID names no item (404, like a missing one)."""
    if not is_uuid(value):
        raise NotFound(f"no item {value}")


MAX_IDEMPOTENCY_KEY = 200


def validate_idempotency_key(key: str) -> None:
    """An ``Idempotency-Key``: 1–200 printable ASCII characters (space to tilde)."""
    if not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY or not all(" " <= c <= "~" for c in key):
        raise ValidationFailed(
            f"Idempotency-Key must be 1–{MAX_IDEMPOTENCY_KEY} printable ASCII characters", field="Idempotency-Key"
        )

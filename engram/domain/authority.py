"""Authority: derived once at write time from (source_type, principal type); it never changes.

inferred 10 < untrusted agent 20 < trusted agent 30 < trusted import 40 < explicit user 50.
"""

from __future__ import annotations

from enum import IntEnum

from engram.domain.keys import allows
from engram.domain.values import PrincipalType, SourceType


class Authority(IntEnum):
    INFERRED = 10
    UNTRUSTED_AGENT = 20
    TRUSTED_AGENT = 30
    TRUSTED_IMPORT = 40
    EXPLICIT_USER = 50


def default_source_type(principal_type: str) -> SourceType:
    return SourceType.AGENT if principal_type == PrincipalType.AGENT else SourceType.EXPLICIT


def derive_authority(source_type: str, principal_type: str, *, trusted: bool = False) -> Authority:
    """The authority a write carries. A source can claim less than its principal allows, never more."""
    if source_type == SourceType.INFERRED:
        return Authority.INFERRED
    if principal_type == PrincipalType.AGENT:
        return Authority.TRUSTED_AGENT if trusted else Authority.UNTRUSTED_AGENT
    if source_type == SourceType.IMPORT:
        return Authority.TRUSTED_IMPORT
    if source_type == SourceType.AGENT:
        # a human or system principal relaying what an agent said
        return Authority.TRUSTED_AGENT
    return Authority.EXPLICIT_USER


def source_trust(authority: Authority) -> float:
    """Trust prior of the source, 0.2 (inferred) … 1.0 (explicit user)."""
    return round(int(authority) / 50, 2)


def may_pin(principal_type: str, scopes: frozenset[str]) -> bool:
    """Whether a caller may pin a memory (a pinned memory enters every startup recall of the workspace): anyone
    with a writing role but an agent, and an agent whose key carries the review or admin scope."""
    return principal_type != PrincipalType.AGENT or allows(scopes, "review")

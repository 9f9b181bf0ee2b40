"""Recall budgets: every answer is packed to item, byte and token limits, and says how much was left out. The
byte budget counts each item's content and its metadata, so an answer's size follows the budget."""

from __future__ import annotations

from dataclasses import dataclass

from engram.domain.models import RankedItem
from engram.domain.validation import metadata_bytes
from engram.errors import ValidationFailed

DEFAULT_ITEM_BUDGET = 10
MAX_ITEM_BUDGET = 200
DEFAULT_BYTE_BUDGET = 32_768
DEFAULT_TOKEN_BUDGET = 4_000


@dataclass(frozen=True)
class Budgets:
    items: int = DEFAULT_ITEM_BUDGET
    bytes: int = DEFAULT_BYTE_BUDGET
    tokens: int = DEFAULT_TOKEN_BUDGET

    @classmethod
    def from_request(cls, items: int | None, bytes_: int | None, tokens: int | None) -> Budgets:
        for field, value, ceiling in (
            ("item_budget", items, MAX_ITEM_BUDGET),
            ("byte_budget", bytes_, None),
            ("token_budget", tokens, None),
        ):
            if value is not None and (value < 1 or (ceiling is not None and value > ceiling)):
                limit = f"1–{ceiling}" if ceiling else "at least 1"
                raise ValidationFailed(f"{field} must be {limit}, got {value}", field=field)
        return cls(
            items=items or DEFAULT_ITEM_BUDGET,
            bytes=bytes_ or DEFAULT_BYTE_BUDGET,
            tokens=tokens or DEFAULT_TOKEN_BUDGET,
        )


def estimate_tokens(text: str) -> int:
    """A model-free estimate (about four characters a token), enough to keep answers inside a budget."""
    return max(1, (len(text) + 3) // 4)


def answer_bytes(candidate: RankedItem) -> int:
    """What an item weighs against the byte budget: its content and its metadata (as compact JSON), in UTF-8."""
    return len(candidate.item.content.encode("utf-8")) + metadata_bytes(candidate.item.metadata)


def pack(ranked: list[RankedItem], budgets: Budgets) -> tuple[list[RankedItem], int]:
    """Keep items in rank order while all three budgets hold; return the kept ones and how many were cut."""
    kept, cut = pack_explained(ranked, budgets)
    return kept, len(cut)


def pack_explained(ranked: list[RankedItem], budgets: Budgets) -> tuple[list[RankedItem], list[tuple[RankedItem, str]]]:
    """``pack``, with each cut candidate and the budget that cut it (in rank order)."""
    kept: list[RankedItem] = []
    cut: list[tuple[RankedItem, str]] = []
    used_bytes = used_tokens = 0
    for candidate in ranked:
        size = answer_bytes(candidate)
        tokens = estimate_tokens(candidate.item.content)
        if len(kept) >= budgets.items:
            cut.append((candidate, f"over the item budget ({budgets.items})"))
        elif used_bytes + size > budgets.bytes:
            cut.append((candidate, f"over the byte budget ({budgets.bytes}; {size} bytes)"))
        elif used_tokens + tokens > budgets.tokens:
            cut.append((candidate, f"over the token budget ({budgets.tokens}; about {tokens} tokens)"))
        else:
            kept.append(candidate)
            used_bytes += size
            used_tokens += tokens
    return kept, cut

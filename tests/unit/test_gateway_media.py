"""The gateway's look at a body's bytes for a lone surrogate escape (services/gateway/media.py): it must never miss
one (the parse after it names the field), and a body whose escapes are all whole pairs — every emoji a client
sends with ``json.dumps(ensure_ascii=True)`` — is not parsed a second time."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from services.gateway.media import LONE_SURROGATE_ESCAPE


def _lone(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


PIECES = st.sampled_from(["a", "\\", "u", "d800", "\\ud800", "\\udc00", "😀", "🍵", "\ud800", "\udfff", "é", '"'])


@settings(max_examples=1000, derandomize=True)
@given(st.lists(st.lists(PIECES, max_size=8).map("".join), min_size=1, max_size=4))
def test_no_lone_surrogate_escape_is_missed(texts: list[str]) -> None:
    body = json.dumps({"content": texts[0], "tags": texts[1:]}).encode()  # ensure_ascii: every surrogate escaped
    if any(_lone(t) for t in texts):
        assert LONE_SURROGATE_ESCAPE.search(body) is not None, body


def test_whole_pairs_are_not_looked_at_again_and_lone_halves_are() -> None:
    for fine in ({"query": "coffee 😀", "tags": ["🍵", "ok"]}, {"q": "\\ud800 written out"}, {"q": "\\\\ud83d😀"}):
        body = json.dumps(fine).encode()
        assert LONE_SURROGATE_ESCAPE.search(body) is None or b"\\\\u" in body, body
    assert LONE_SURROGATE_ESCAPE.search(json.dumps({"query": "coffee 😀🍵"}).encode()) is None
    for lone in ("a\ud800b", "\udc00", "😀\udc00", "\ud800😀", "\ud83d\ud83d"):
        assert LONE_SURROGATE_ESCAPE.search(json.dumps({"q": lone}).encode()) is not None, lone

"""Retention: is a message worth keeping? First match wins:

- ``noise``: the *whole* message is chatter, i.e. nothing but ``CHATTER`` phrases once case, punctuation
  and emoji skin tones are ignored ("Ok, thanks!", "👍👍", "sounds good."), repeated letters collapsed
  ("okkk", "thxxx") and laughter ("hahaha", "lolol") included. The same words inside a real sentence are
  not chatter: "ok, the deploy key lives in vault" is kept. A message with no words at all is noise too.
- ``transient``: time-bound, short-lived statements ("brb", "afk", "going to lunch", "in a meeting",
  "running the tests now", "back in 5", "heading out", "currently debugging").
- ``uncertain``: hedged ("maybe", "I think", "not sure", "possibly", "might", "perhaps", "probably",
  "I guess", "I suspect", "unclear").
- ``retain``: anything else.

Retention confidence: noise 0.9, transient 0.8, uncertain 0.7, retain 0.7 with a kind cue, else 0.6.
"""

from __future__ import annotations

import re
import unicodedata

from engram.domain.classification.cues import Cue, cue, strongest

CHATTER: tuple[str, ...] = (
    "ok",
    "okay",
    "k",
    "kk",
    "alright",
    "done",
    "thanks",
    "thank you",
    "thx",
    "ty",
    "many thanks",
    "thanks a lot",
    "thank you very much",
    "cheers",
    "lol",
    "haha",
    "sure",
    "yes",
    "yep",
    "yeah",
    "no",
    "nope",
    "cool",
    "great",
    "nice",
    "perfect",
    "+1",
    "np",
    "no problem",
    "sounds good",
    "got it",
    "will do",
    "ack",
    "noted",
    "👍",
    "👌",
    "🙏",
    "✅",
    "🙂",
    "😀",
    "😂",
    "🎉",
)
_SKIN_TONES = range(0x1F3FB, 0x1F400)
_INVISIBLE = {"\ufe0f", "\u200d"}  # emoji variation selector, zero-width joiner
_LAUGHTER = re.compile(r"(?:ha){2,}h?|(?:he){2,}|l(?:ol)+|lo+l")


def _collapse(token: str) -> str:
    """Repeated letters collapsed to one ("okkk" → "ok", "cool" → "col"), laughter to "haha"."""
    return "haha" if _LAUGHTER.fullmatch(token) else re.sub(r"(.)\1+", r"\1", token)


def _chatter_tokens(text: str) -> list[str]:
    """Lower-case words and single emoji; punctuation, variation selectors and skin tones dropped."""
    chars: list[str] = []
    for char in unicodedata.normalize("NFKC", text).casefold():
        category = unicodedata.category(char)
        if char in _INVISIBLE or ord(char) in _SKIN_TONES:
            continue
        if category.startswith("P"):
            chars.append(" ")
        elif category == "So":
            chars.append(f" {char} ")
        else:
            chars.append(char)
    return [_collapse(token) for token in "".join(chars).split()]


_CHATTER_PHRASES = sorted(
    {tuple(_collapse(word) for word in phrase.split()) for phrase in CHATTER}, key=len, reverse=True
)


def is_chatter(text: str) -> bool:
    """True when the whole message is chatter phrases and nothing else (or no words at all)."""
    tokens = _chatter_tokens(text)
    position = 0
    while position < len(tokens):
        phrase = next((p for p in _CHATTER_PHRASES if tuple(tokens[position : position + len(p)]) == p), None)
        if phrase is None:
            return False
        position += len(phrase)
    return True


_ACTIVITY = (
    r"running|deploying|building|restarting|rebooting|testing|checking|debugging|investigating|"
    r"looking\s+into|working\s+on|fixing|merging|pushing|waiting\s+(?:for|on)|updating|installing|"
    r"compiling|reviewing|rolling\s+back|migrating"
)
# "running the tests now", but not "testing is now mandatory": no copula between the activity and "now"
_NO_VERB_GAP = r"(?:(?!\b(?:is|are|was|were|has|have|will|be)\b)[^.!?\n]){0,80}?"
_NOW = r"right\s+now|now|atm|at\s+the\s+moment"
_A_MOMENT = r"a\s+(?:bit|sec|second|minute|min|few|moment)"
_AWAY_TO = r"lunch|dinner|breakfast|coffee|bed|meeting|call|gym|standup"
TRANSIENT_CUES: tuple[Cue, ...] = (
    cue("brb"),
    cue("afk"),
    cue("be right back"),
    cue("heading out"),
    cue("logging off"),
    cue("signing off"),
    cue("out of office"),
    cue("back in …", pattern=rf"\bback\s+in\s+(?:\d+|{_A_MOMENT})\b"),
    cue("give me a minute", pattern=rf"\bgive\s+me\s+{_A_MOMENT}\b"),
    cue(
        "off to lunch",
        pattern=rf"\b(?:going|heading|off|popping\s+out)\s+(?:to|for)\s+(?:a\s+|the\s+)?"
        rf"(?:{_AWAY_TO})\b",
    ),
    cue("in a meeting", pattern=r"\b(?:in|on)\s+a\s+(?:meeting|call)\b"),
    cue("at lunch", pattern=r"\b(?:at|out\s+for)\s+lunch\b"),
    cue("stepping out", pattern=r"\bstepping\s+(?:out|away)\b"),
    cue("doing something now", pattern=rf"\b(?:{_ACTIVITY})\b{_NO_VERB_GAP}\b(?:{_NOW})\b"),
    cue("currently …ing", pattern=r"\bcurrently\s+\w+ing\b"),
)
UNCERTAIN_CUES: tuple[Cue, ...] = tuple(
    cue(hedge)
    for hedge in (
        "maybe",
        "I think",
        "not sure",
        "possibly",
        "might",
        "perhaps",
        "probably",
        "I guess",
        "I suspect",
        "I believe",
        "unclear",
        "not certain",
        "unsure",
        "could be",
    )
)


def classify_retention(text: str, *, noise: bool, kind_cued: bool) -> tuple[str, float, list[str]]:
    if noise:
        return "noise", 0.9, ["retention: the whole message is chatter"]
    if (cue := strongest(TRANSIENT_CUES, text)) is not None:
        return "transient", 0.8, [f"transient cue '{cue.label}'"]
    if (cue := strongest(UNCERTAIN_CUES, text)) is not None:
        return "uncertain", 0.7, [f"hedge '{cue.label}'"]
    return "retain", 0.7 if kind_cued else 0.6, ["retention: no chatter, transient or hedge cue"]

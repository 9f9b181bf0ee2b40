"""The kind of a memory. Each kind has cue phrases, matched case-insensitively as whole words (curly
apostrophes count as straight ones). The kind whose best cue is strongest wins; equal strengths go to the
earlier kind in ``KIND_PRECEDENCE`` (invariant, decision, doctrine, preference, procedure, observation). No
cue: ``fact``.

- invariant: "must never", "must always", "must not", "shall never", "invariant", "under no circumstances"
- decision: "we decided", "we've decided", "we chose", "we agreed", "agreed to", "decision:", "going with",
  "decided to"
- doctrine: "we always", "we never", "our policy", "principle:", "as a rule", "our convention"
- preference: "I prefer", "prefers", "I'd rather", "my favourite/favorite", "please always/never use",
  "I like", "I love", "I hate", "I don't like"
- procedure: "step 1", "first, … then", "to <do something>, run", a numbered list (a line ``1.`` and,
  within 20 lines, a line ``2.``), "how to"
- observation: "I noticed", "it seems", "observed", "looks like", "I saw", "apparently", "today"

Most cues are strong (0.85); medium (0.7): "must not", "going with", "decided to", "prefers", "I like",
"I love", "I hate", "I don't like", "first, … then", "how to", "looks like", "I saw", "apparently"; weak
(0.6): "today". Taxonomy confidence is the winning cue's strength, less 0.1 for each other kind that was
also cued (ambiguity), never below 0.3; the default ``fact`` gets 0.5, and 0.3 when the message is chatter.
"""

from __future__ import annotations

from engram.domain.classification.cues import MEDIUM, WEAK, Cue, cue, strongest

DEFAULT_KIND = "fact"
DEFAULT_KIND_CONFIDENCE = 0.5
NOISE_KIND_CONFIDENCE = 0.3
AMBIGUITY_PENALTY = 0.1
MIN_CUED_CONFIDENCE = 0.3

KIND_CUES: dict[str, tuple[Cue, ...]] = {
    "invariant": (
        cue("must never"),
        cue("must always"),
        cue("must not", MEDIUM),
        cue("shall never"),
        cue("invariant", pattern=r"\binvariants?\b"),
        cue("under no circumstances"),
    ),
    "decision": (
        cue("we decided"),
        cue("we've decided"),
        cue("we have decided"),
        cue("we chose"),
        cue("we agreed"),
        cue("agreed to"),
        cue("decision:", pattern=r"\bdecision\s*:"),
        cue("going with", MEDIUM),
        cue("decided to", MEDIUM),
    ),
    "doctrine": (
        cue("we always"),
        cue("we never"),
        cue("our policy"),
        cue("principle:", pattern=r"\bprinciple\s*:"),
        cue("as a rule"),
        cue("our convention"),
    ),
    "preference": (
        cue("I prefer"),
        cue("prefers", MEDIUM),
        cue("I'd rather"),
        cue("I would rather"),
        cue("my favourite"),
        cue("my favorite"),
        cue("please always use"),
        cue("please never use"),
        cue("I like", MEDIUM),
        cue("I love", MEDIUM),
        cue("I hate", MEDIUM),
        cue("I don't like", MEDIUM),
    ),
    "procedure": (
        cue("step 1", pattern=r"\bstep\s*(?:1|one)\b"),
        cue("first, … then", MEDIUM, r"\bfirst\b[^.!?\n]{0,200}?\bthen\b"),
        cue("to …, run", pattern=r"\bto\s+\w+(?:\s+[\w-]+){0,4},\s*run\b"),
        cue("numbered list", pattern=r"^[ \t]*1[.)][ \t]+\S.*\n(?:.*\n){0,20}?[ \t]*2[.)][ \t]+\S"),
        cue("how to", MEDIUM),
    ),
    "observation": (
        cue("I noticed"),
        cue("it seems"),
        cue("observed", pattern=r"\bobserved\b"),
        cue("looks like", MEDIUM),
        cue("I saw", MEDIUM),
        cue("apparently", MEDIUM),
        cue("today", WEAK),
    ),
}
KIND_PRECEDENCE: tuple[str, ...] = tuple(KIND_CUES)


def classify_kind(text: str, *, noise: bool) -> tuple[str, float, list[str]]:
    matched = {kind: cue for kind in KIND_PRECEDENCE if (cue := strongest(KIND_CUES[kind], text)) is not None}
    if not matched:
        confidence = NOISE_KIND_CONFIDENCE if noise else DEFAULT_KIND_CONFIDENCE
        return DEFAULT_KIND, confidence, [f"no kind cue; default {DEFAULT_KIND}"]
    kind = max(matched, key=lambda k: (matched[k].strength, -KIND_PRECEDENCE.index(k)))
    others = [k for k in matched if k != kind]
    confidence = max(MIN_CUED_CONFIDENCE, matched[kind].strength - AMBIGUITY_PENALTY * len(others))
    reasons = [f"kind cue '{matched[kind].label}'"]
    reasons += [f"also a {k} cue '{matched[k].label}'" for k in others]
    return kind, confidence, reasons

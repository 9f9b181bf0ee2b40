"""What the rules see in a text, as numbers for the kind model (``kind_model``): a cue family present or not,
the strength of each kind's strongest cue (``kinds.KIND_CUES``), whether the whole message is chatter, its
length and whether it spans lines. Pure and deterministic; the same text always gives the same vector.

Besides the families that lean towards one kind, some describe how a sentence is put: obligation and habit
words, universal quantifiers ("every", "nobody"), strict words ("at most", "only", "can't"), a group or a
system as its subject, a person in the third person, future or past time, hedges, comparisons, negation, the
passive, an opening "The X is…", a name inside the sentence, a question or an exclamation, a lower-case start.
They were added for the line between doctrine (how people here work), invariant (what always holds) and fact
(how things are), and kept because cross-validation on the tuning part rose with them.

The families are broad on purpose: none decides a kind on its own (that is what the cue lists did, and
natural phrasing slipped past them); the model weighs them together with the text's embedding.
"""

from __future__ import annotations

import re

import numpy as np

from engram.domain.classification.cues import strongest
from engram.domain.classification.kinds import KIND_CUES, KIND_PRECEDENCE
from engram.domain.classification.retention import is_chatter

_FAMILIES: tuple[tuple[str, str], ...] = (
    ("first person", r"\b(?:i|i'm|i've|i'd|my|me|mine)\b"),
    ("we", r"\b(?:we|we're|we'll|we've|our|us)\b"),
    ("please", r"\bplease\b"),
    (
        "liking",
        r"\b(?:prefers?|preferred|like|likes|love|loves|hate|hates|rather|fan of|favou?rite|enjoys?|"
        r"can't stand|partial to|wants?)\b",
    ),
    (
        "absolute",
        r"\b(?:never|always|no exceptions?|at all times|cannot|can't|can never|exactly one|only ever|unique|"
        r"immutable|no matter what|without fail|guaranteed|impossible|not allowed|only one|once and only once)\b",
    ),
    (
        "norm",
        r"\b(?:try to|rule of thumb|practice|default|policy|convention|get a|gets a|goes through|go through|"
        r"come with|comes with|stays|lives|over)\b",
    ),
    (
        "choice",
        r"\b(?:decided|decision|chose|chosen|choose|picked|settled|approved|agreed|opted|final|signed off|"
        r"going to|we'll|will|won't|from now on|going forward|starting|switching|moving|dropped|adopting|"
        r"cancelled|cut|committed)\b",
    ),
    ("future", r"\b(?:next (?:week|month|quarter|sprint|year)|from (?:now|next)|by (?:june|may|january|the end))\b"),
    (
        "recap",
        r"\b(?:recap|summary|summar\w*|tl;?dr|takeaways?|in short|in brief|overview|highlights|status|roundup|"
        r"gist|synopsis|digest|wrap-up|to sum up|notes from|in a nutshell|boils down|short version|essence|"
        r"findings|key points|in review|update)\b",
    ),
    (
        "noticing",
        r"\b(?:seems?|seemed|noticed|looks like|lately|appears?|spike|spiked|dropped|went (?:up|down)|creeps?|"
        r"creeping|grew|more|fewer|again|mostly|often|every time|whenever|spotted|interesting)\b",
    ),
    (
        "day",
        r"\b(?:today|tonight|this (?:morning|afternoon|evening|weekend)|last night|yesterday|spent|went|had|took|"
        r"got|finally|felt|feeling|day|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)\b",
    ),
    ("past tense", r"\b\w+ed\b"),
    ("steps", r"(?:^\s*(?:\d+[.)]|-)\s)|->|\bthen\b|\bstep\b|\bfirst\b|\bafter\b|\bto \w+\b.*[:,]"),
    (
        "imperative",
        r"^(?:clone|run|open|go|click|create|add|install|take|make|fill|pour|water|warm|restart|submit|write|"
        r"build|push|log|set|check|use|unplug|feed|mix|put|drop|photograph|descale|jump|connect|pack|copy|"
        r"handle|provision|apply|unclog)\b",
    ),
    ("colon", r":"),
    ("list of three", r"(?:[^,\n]*,){2}"),
    ("dash", r"—|–| - "),
    ("digit", r"\d"),
    ("state verb", r"\b(?:is|are|was|has|have|runs|uses|takes|lives|works)\b"),
    # the line between doctrine (how people here work), invariant (what always holds) and fact (how things are)
    (
        "obligation",
        r"\b(?:should|shouldn't|ought to|needs? to|has to|have to|(?:is|are) expected to|supposed to|"
        r"needs? (?:a|an|the)|requires?|required)\b",
    ),
    (
        "habit",
        r"\b(?:usually|generally|normally|typically|tend to|by default|where(?:ver)? (?:possible|that's possible)|"
        r"as a matter of course|routinely|habit|custom|rules?|guideline|norm|etiquette|protocol)\b",
    ),
    ("every", r"\b(?:every|each|all|any|anyone|everyone|nobody|no one|none|whoever|whatever|whenever)\b"),
    (
        "strict",
        r"\b(?:strictly|at most|at least|exactly|only|unique|single-use|atomically|no two|full stop|"
        r"without exception|whatsoever|at any (?:time|moment)|for good|can't|cannot|never|locked|immutable|must)\b",
    ),
    (
        "group",
        r"\b(?:we|our|team|teams|everyone|nobody|staff|employees|members|household|family|company|house|here)\b",
    ),
    (
        "system noun",
        r"\b(?:database|table|api|tokens?|keys?|ids?|rows?|field|service|server|queue|index|account|balance|"
        r"transaction|records?|version|requests?|data|endpoint|build|branch|stream|ledger|schema)\b",
    ),
    ("third person", r"\b(?:he|she|his|her|him|they|their|he's|she's)\b"),
    ("will or next", r"\b(?:will|'ll|going to|gonna|next (?:week|month|quarter|sprint|year)|from now on|starting)\b"),
    (
        "past time",
        r"\b(?:yesterday|last (?:night|week|month|year)|ago|this (?:morning|afternoon|evening)|earlier today|"
        r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    ),
    (
        "hedge",
        r"\b(?:i think|probably|maybe|perhaps|might|apparently|seems?|seemingly|as far as|not sure|i guess|"
        r"i believe|kind of|sort of)\b",
    ),
    ("comparison", r"\b(?:than|over|rather|instead)\b"),
    ("negation", r"\b(?:not|no|never|don't|doesn't|isn't|aren't|can't|won't|nothing|nobody)\b"),
    (
        "passive",
        r"\b(?:is|are|get|gets|be|been|stays?|goes|go)\s+"
        r"(?:\w+ed|written|given|done|kept|made|shown|seen|sent|taken|held|built)\b",
    ),
    ("copula opening", r"^\s*(?:the|our|my|his|her|their|a|an)\s+[\w' -]{1,40}?\s(?:is|are|was|has|runs|uses)\b"),
)
_CASED: tuple[tuple[str, str], ...] = (  # read with the text's own case
    ("name inside", r"(?<=[a-z,;] )[A-Z][a-zA-Z]+"),  # a capitalised word within a sentence: a person, a place…
    ("question", r"\?"),
    ("exclamation", r"!"),
    ("lower-case opening", r"^[a-z]"),
)
FAMILIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE | re.MULTILINE)) for name, pattern in _FAMILIES
)
CASED: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(pattern)) for name, pattern in _CASED)
FEATURE_NAMES: tuple[str, ...] = (
    *(name for name, _ in FAMILIES),
    *(name for name, _ in CASED),
    *(f"{kind} cue" for kind in KIND_PRECEDENCE),
    "chatter",
    "length",
    "several lines",
)
LENGTH_WORDS = 40  # the length feature is the word count over this, at most 1


def features(text: str) -> np.ndarray:
    """The rule features of ``text`` (curly apostrophes read as straight ones), in ``FEATURE_NAMES`` order."""
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    values = [1.0 if pattern.search(text) else 0.0 for _, pattern in (*FAMILIES, *CASED)]
    for kind in KIND_PRECEDENCE:
        cue = strongest(KIND_CUES[kind], text)
        values.append(cue.strength if cue is not None else 0.0)
    values.append(1.0 if is_chatter(text) else 0.0)
    values.append(min(len(text.split()), LENGTH_WORDS) / LENGTH_WORDS)
    values.append(1.0 if "\n" in text.strip() else 0.0)
    return np.asarray(values, dtype=np.float32)

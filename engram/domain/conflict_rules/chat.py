"""Whether a text reads as a turn of a conversation rather than a statement about the world: the learned
judge's gate (``learned.in_domain``) leaves such texts to the rules, since none of the statements it was fitted
on reads so (docs/adr/0008-learned-contradiction-judge.md).

A text reads as chat when it is stored with its speaker ("Melanie: Wow, that agency looks great!"), asks or
exclaims (``?``, ``!``), addresses the listener ("I'm here for you if you need me"), voices a feeling or an
appraisal ("Glad it brought back good memories.", "Seeing them together makes me so happy.") or opens with a
reply word set off by punctuation ("Yeah, …", "Well... …", "Oh, …"; "No refunds after 30 days." is a statement), or
with an interjection no statement opens with, punctuated or not ("Yeah they mean the world to me."), or speaks
("gonna", "wanna", "kinda").
Chat turns stored without their speaker sit close to one another in e5 space whatever they say, and the judge
read their pleasantries as changes (docs/benchmarks.md, issue #16).

``without_listener`` takes out the name a greeting opening a text addresses ("Hey James! …", "Hi Caroline, …",
after a speaker or not): the listener, not a value the text states, so that "Hey James!" / "Hey John!" is no
changed name. Pure, no I/O.
"""

from __future__ import annotations

import re

# a turn of a conversation stored with its speaker ("Melanie: Wow, that agency looks great!")
CHAT_TURN = re.compile(r"^\s*[A-Z][a-z]+:\s")
# a question or an exclamation
NOT_A_STATEMENT = re.compile(r"[?!]")
WORD = re.compile(r"[a-z]+(?:['’][a-z]+)*")
# the listener addressed
LISTENER = frozenset({"you", "your", "yours", "yourself", "yourselves", "you're", "you've", "you'll", "you'd", "ya"})
# a feeling or an appraisal of the speaker's
FEELING = frozenset(
    """
happy happier glad love loved loving lovely awesome amazing great wow thanks thank appreciate appreciated proud sorry
excited exciting fun cool nice beautiful congrats congratulations wonderful fantastic incredible pleasant fond sweet
cute yay omg haha lol hope hoping stoked thrilled blessed grateful inspiring joy joyful cherish cherished calming
""".split()
)
# spoken forms no one writes in a note of a fact
SPOKEN = frozenset({"gonna", "wanna", "gotta", "kinda", "sorta"})
# a reply word opening the text, set off by punctuation
OPENER = re.compile(
    r"^\W*(?:yeah|yep|yes|yup|no|nope|ok|okay|well|oh|so|hey|hi|hello|wow|haha|lol|hmm|ah|aw+|um|sure|nah|thanks|"
    r"omg|whoa|ooh|yay)\b\s*[,.!…—–-]",
    re.IGNORECASE,
)
# an interjection opening the text, with or without punctuation after it ("Yeah they mean the world to me.")
INTERJECTION = re.compile(
    r"^\W*(?:yeah|yep|yup|nah|nope|haha\w*|lol|omg|wow|aw+|yay|hey|hmm+|whoa|ooh)\b(?![-'’])", re.IGNORECASE
)


def reads_as_chat(text: str) -> bool:
    """Whether ``text`` reads as a turn of a conversation (see the module docstring)."""
    if CHAT_TURN.match(text) or NOT_A_STATEMENT.search(text) or OPENER.match(text) or INTERJECTION.match(text):
        return True
    said = set(WORD.findall(text.lower().replace("’", "'")))
    return bool(said & LISTENER or said & FEELING or said & SPOKEN)


# a greeting opening the text (after its speaker, if stored with one) and the name of the listener it addresses,
# set off by punctuation: "Hey James! …", "Melanie: Hi Caroline, …", "Good morning Sam."
GREETING_NAME = re.compile(
    r"^(?P<before>\s*(?:[A-Z][a-z]+:\s+)?(?:hey|hi|hiya|hello|yo|howdy|morning|good\s+(?:morning|afternoon|evening)|"
    r"thanks|thank\s+you|cheers|congrats|congratulations|welcome\s+back|bye)\s*,?\s+)"
    r"(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)(?=\s*[!,.?…]|\s*$)",
    re.IGNORECASE,
)


def without_listener(text: str) -> str:
    """``text`` without the name its opening greeting addresses ("Hey James! How was it?" → "Hey! How was it?")."""
    m = GREETING_NAME.match(text)
    if m is None or not m["name"][0].isupper():
        return text
    return m["before"].rstrip() + text[m.end("name") :]

"""A job handed over: the new text says someone "has taken over" what the existing one says another person does.

``taken_over``: the new text names a doer (capitalised words before "has taken over", "took over", "takes over")
and the job after it ("the support inbox", "as cox of the men's eight"); at least half of the job's content words
are in the existing text, which names someone the new one does not: "Leah manages Cragside's front desk." / "Sam has
taken over Cragside's front desk.", "Kingsmead's men's eight is coxed by Tilly." / "Rosalind has taken over as cox
of the men's eight.".

Left alone: a cover or a plan ("while Leah is on leave", "for the summer", "this week", "temporarily", "will take
over"), an addition ("also"), a job the existing text does not speak of, a doer the existing text already names, and
a negation.
"""

from __future__ import annotations

from engram.domain.conflict_rules.texts import Text
from engram.domain.conflict_rules.verdicts import Verdict

_TAKES = frozenset({"taken", "took", "takes", "taking"})
_NOT_FOR_GOOD = frozenset(
    """while during until temporarily temporary covering cover interim acting meantime also too will going next
    this today tonight tomorrow summer winter holiday holidays leave absence""".split()
)
_SKIPPED = frozenset({"as", "the", "a", "an", "from", "over"})


def taken_over(old: Text, new: Text) -> Verdict | None:
    """A contradiction when the new text hands the existing one's job to someone else (see the module
    docstring), else None."""
    if old.negated or new.negated or len(new.clauses) != 1:
        return None
    tokens = new.tokens
    lowered = [t.lower for t in tokens]
    if set(lowered) & _NOT_FOR_GOOD:
        return None
    at = next((i for i in range(1, len(tokens) - 1) if lowered[i] in _TAKES and lowered[i + 1] == "over"), None)
    if at is None:
        return None
    doer = [t for t in tokens[:at] if t.text[:1].isupper() and t.content is not None]
    job = {c for t in tokens[at + 2 :] if t.lower not in _SKIPPED and (c := t.content) is not None}
    if not doer or not job or any(t.content in old.content for t in doer):
        return None
    if len(job & old.content) * 2 < len(job):
        return None  # another job
    named = [t.text for t in old.tokens if t.text[:1].isupper() and t.content and t.content not in new.words]
    if not named:
        return None  # the existing text names no one else
    who = " ".join(t.text for t in doer)
    return Verdict(
        "contradiction",
        "taken_over",
        0.8,
        f'who: "{" ".join(named)}" in the existing memory; "{who}" has taken it over in the new one.',
    )

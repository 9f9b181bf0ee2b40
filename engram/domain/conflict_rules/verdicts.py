"""Verdicts and what authority makes of them."""

from __future__ import annotations

from dataclasses import dataclass

LABELS = ("duplicate", "refinement", "contradiction")
ACTIONS = ("supersede", "propose", "flag", "dispute_new", "dispute_existing", "none")


@dataclass(frozen=True)
class Verdict:
    label: str  # duplicate | refinement | contradiction
    rule: str  # stable rule id: "negation", "numbers_differ:date", "exclusive_predicate:lives in", …
    score: float  # 0..1 confidence of the rule
    explanation: str  # one sentence for humans, quoting what differs


@dataclass(frozen=True)
class Outcome:
    action: str  # one of ACTIONS
    opens_conflict: bool
    reason: str


def outcome(verdict: Verdict, existing_authority: int, new_authority: int) -> Outcome:
    """What the conflicts consumer does with a verdict. Authority decides; nothing is ever replaced silently.

    - duplicate → ``none``: reported and counted; neither memory changes, whatever the authorities.
    - refinement, new authority ≥ existing → ``supersede``: a memory may supersede another of lower or equal
      authority.
    - refinement, new authority < existing → ``propose``: the new memory stays (or becomes) a proposal flagged
      as overlapping the existing one; the stronger memory is untouched until a reviewer decides.
    - contradiction → a conflict is opened and the weaker side is marked disputed: ``dispute_new`` when the new
      authority is lower, ``dispute_existing`` when it is higher. At equal authority it is ``dispute_new``: the
      incumbent keeps its place until a reviewer decides, so a newcomer cannot unseat a peer just by arriving.
    - any other label → ``flag``: a verdict this table does not know authorizes no change; it is only shown to
      a reviewer.
    """
    existing_authority, new_authority = int(existing_authority), int(new_authority)
    versus = f"(authority {new_authority} new vs {existing_authority} existing)"
    if verdict.label == "duplicate":
        return Outcome("none", False, f"duplicate {versus}: reported and counted, nothing changes")
    if verdict.label == "refinement":
        if new_authority >= existing_authority:
            return Outcome("supersede", False, f"refinement {versus}: the new memory supersedes the existing one")
        return Outcome("propose", False, f"refinement {versus}: the new memory is a proposal flagged as overlapping")
    if verdict.label == "contradiction":
        if new_authority > existing_authority:
            return Outcome("dispute_existing", True, f"contradiction {versus}: the existing memory is disputed")
        if new_authority < existing_authority:
            return Outcome("dispute_new", True, f"contradiction {versus}: the new memory is disputed")
        return Outcome(
            "dispute_new",
            True,
            f"contradiction {versus}: the incumbent keeps its place, the new memory "
            "is disputed until a reviewer decides",
        )
    return Outcome("flag", False, f"unknown label {verdict.label!r}: shown to a reviewer, nothing changes")

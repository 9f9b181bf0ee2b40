"""Verdicts and what authority makes of them."""

from __future__ import annotations

from dataclasses import dataclass

LABELS = ("duplicate", "refinement", "contradiction")
ACTIONS = ("record", "suggest", "propose", "flag", "dispute_new", "dispute_existing", "none")


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


def outcome(verdict: Verdict, existing_authority: int, new_authority: int, *, same_session: bool = False) -> Outcome:
    """What the conflicts consumer does with a verdict. Authority decides; nothing is ever replaced without a
    reviewer: the rules' precision at replacing was never measured at 0.99, so a refinement is only suggested.

    - duplicate → ``record``: a ``duplicate`` conflict is opened; neither memory changes, whatever the
      authorities, and recall shows the stronger of the two in one slot.
    - refinement, new authority ≥ existing → ``suggest``: a ``refinement`` conflict is opened for a reviewer,
      whose ``accept_new`` supersedes the existing memory; neither memory changes until then.
    - refinement, new authority < existing → ``propose``: the new memory stays (or becomes) a proposal flagged
      as overlapping the existing one; the stronger memory is untouched until a reviewer decides.
    - contradiction → a conflict is opened and the weaker side is marked disputed: ``dispute_new`` when the new
      authority is lower, ``dispute_existing`` when it is higher. At equal authority neither side is weaker:
      ``record``, a conflict for a reviewer, and both memories stay in recall with the open conflict's lower
      trust. Disputing either would hide it from recall on the detector's word alone, and no contradiction
      detector's precision is measured at 0.99: a false alarm would take from its writer the memory just
      written (the newcomer), or an older one the same writer never withdrew (the incumbent).
    - two turns of one conversation (``same_session``: the same ``source_session``) → ``none`` for anything
      but a duplicate: what someone said earlier in a conversation is not contradicted or refined by what was
      said later in it, only continued.
    - any other label → ``flag``: a verdict this table does not know authorizes no change; it is only shown to
      a reviewer.
    """
    existing_authority, new_authority = int(existing_authority), int(new_authority)
    versus = f"(authority {new_authority} new vs {existing_authority} existing)"
    if verdict.label == "duplicate":
        return Outcome("record", True, f"duplicate {versus}: recorded, nothing changes, recall shows the stronger")
    if same_session and verdict.label in LABELS:
        return Outcome("none", False, f"{verdict.label} between turns of one session: not acted on")
    if verdict.label == "refinement":
        if new_authority >= existing_authority:
            return Outcome("suggest", True, f"refinement {versus}: a reviewer may let the new memory supersede")
        return Outcome("propose", True, f"refinement {versus}: the new memory is a proposal flagged as overlapping")
    if verdict.label == "contradiction":
        if new_authority > existing_authority:
            return Outcome("dispute_existing", True, f"contradiction {versus}: the existing memory is disputed")
        if new_authority < existing_authority:
            return Outcome("dispute_new", True, f"contradiction {versus}: the new memory is disputed")
        return Outcome(
            "record", True, f"contradiction {versus}: neither is weaker, both stay in recall until a reviewer decides"
        )
    return Outcome("flag", False, f"unknown label {verdict.label!r}: shown to a reviewer, nothing changes")

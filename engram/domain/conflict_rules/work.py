"""How much the rules may do for one pair of texts.

``judge`` runs in the conflicts consumer that every tenant shares, so what two texts can make it do is bounded:

- ``MAX_ANALYSED_CHARS``: of a longer text only the whole clauses of its first ``MAX_ANALYSED_CHARS``
  characters are read, and only by the negation rule (what it finds there holds for the whole text).
- ``MAX_QUANTITIES``: the rules that compare the values of the two texts pairwise (``numbers_differ``,
  ``changed_value``, ``near_identical``, ``containment``) are skipped when either text holds more quantities.
- ``MAX_CLAIMS``: ``exclusive_predicate`` is skipped when either text makes more claims of an exclusive
  predicate.
- ``MAX_STEPS``: every judgement carries a ``Work`` allowance counted in steps (a comparison of two
  quantities, claims or clauses, a token scanned); when it is spent the rules stop and give no verdict.

Each limit only ever takes a verdict away, never adds one, and says so in ``Work.gave_up``; the caller records
it. The limits sit far above what memories hold (the conflict tests' pairs need a few hundred steps at most).
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_ANALYSED_CHARS = 16_384
MAX_QUANTITIES = 100
MAX_CLAIMS = 50
MAX_STEPS = 50_000


class OutOfWork(Exception):
    """Raised inside the rules when a judgement's allowance is spent; ``judge`` turns it into no verdict. It
    never leaves this package."""


@dataclass
class Work:
    """The steps one judgement may take, what it took, and why the rules left anything unjudged."""

    limit: int = MAX_STEPS
    spent: int = 0
    gave_up: str | None = None

    def charge(self, steps: int = 1) -> None:
        self.spent += steps
        if self.spent > self.limit:
            self.gave_up = f"the rules stopped at their work limit of {self.limit:,} steps"
            raise OutOfWork

    def skip(self, why: str) -> None:
        """A rule did not run; the first reason is kept."""
        self.gave_up = self.gave_up or why

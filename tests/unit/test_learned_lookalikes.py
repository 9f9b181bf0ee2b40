"""Another fact of the same subject is no contradiction: fresh compatible look-alikes for the learned judge's
nearest labelled changes (docs/benchmarks.md, "knngate").

Each pair keeps its subject and states another attribute of it, the shape of the false alarm the neighbour columns
brought ("The team deploys the billing service every Thursday afternoon." / "The billing service keeps its logs for
ninety days.": its ten nearest labelled changes are "no longer" contradictions that drop an "every …" phrase).
Written by hand for this test, in none of bench/data/conflicts' batches; they are tuning data (the gate was
measured against them beside the cross-validation on batches 1-8), not a held-out measure. Their e5 passage vectors
are committed in tests/support/learned_lookalikes.npz (``passage_vectors.passages`` of bench/, the vectors the
local embedder stores).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engram.domain import conflict_rules
from engram.domain.conflict_rules import learned
from tests.support.conflicts_eval import FLOOR

VECTORS = Path(__file__).resolve().parents[1] / "support" / "learned_lookalikes.npz"
THURSDAYS = ("The team deploys the billing service every Thursday afternoon.",
             "The billing service keeps its logs for ninety days.")  # fmt: skip
LOOKALIKES = [
    ("Marta walks her dog every evening after dinner.", "Marta's dog is a seven-year-old beagle."),
    ("The platform team rotates the on-call pager every Monday morning.", "The platform team has six engineers."),
    ("The office cleaners come in every Friday night.", "The office has a small kitchen on the second floor."),
    ("I water the tomato plants every morning before work.", "The tomato plants grow in clay pots on the balcony."),
    ("The backup job runs every night at two.", "The backup job stores its archives in the Frankfurt region."),
    ("My brother plays football every Saturday afternoon.", "My brother works as an electrician."),
    ("The reporting service sends a summary email every weekday at nine.", "The reporting service is written in Go."),
    ("Priya swims at the community pool every Tuesday.", "Priya's community pool is heated to twenty-eight degrees."),
    ("The security team reviews the access logs every Thursday.", "The security team reports to the CTO."),
    ("I take the train to the office every Wednesday.", "The office is a ten-minute walk from the station."),
    ("The CI pipeline runs the integration tests on every merge.", "The CI pipeline uses four parallel runners."),
    ("Grandma bakes bread every Sunday morning.", "Grandma lives in a cottage near the lake."),
    ("The billing service retries failed payments every six hours.",
     "The billing service is owned by the payments team."),
    ("The mobile app ships a new release every two weeks.", "The mobile app supports English and Spanish."),
]  # fmt: skip
# the rules' changed-value rule read "every other Friday" → "twelve thousand subscribers" as a changed value, until
# values of two kinds (a frequency, a count) were taken for two attributes (2026-12-03, evening)
RULES_FLAG = ("The marketing newsletter goes out every other Friday.",
              "The marketing newsletter has about twelve thousand subscribers.")  # fmt: skip
# half the stems shared ("sales dashboard"), so the gate is half open and its neighbours still lift it (0.53 → 0.76)
STILL_LIFTED = ("The data team publishes the sales dashboard every Monday.", "The sales dashboard is built in Looker.")


def _vectors() -> dict[str, np.ndarray]:
    with np.load(VECTORS, allow_pickle=False) as data:
        return {str(t): v for t, v in zip(data["texts"], data["vectors"], strict=True)}


def _judged(pair: tuple[str, str], with_vectors: bool) -> conflict_rules.Verdict | None:
    vectors = _vectors()
    a, b = vectors[pair[0]], vectors[pair[1]]
    sim = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    return conflict_rules.judge_with_learned(*pair, sim, floor=FLOOR, vectors=(a, b) if with_vectors else None)


def _flagged(verdict: conflict_rules.Verdict | None) -> bool:
    return verdict is not None and verdict.label == "contradiction"


def test_every_pair_has_its_committed_vectors() -> None:
    texts = {t for pair in [THURSDAYS, RULES_FLAG, STILL_LIFTED, *LOOKALIKES] for t in pair}
    assert set(_vectors()) == texts


def test_the_billing_service_s_other_fact_is_no_contradiction_with_its_vectors() -> None:
    assert learned.one_thing(*THURSDAYS) == pytest.approx(2 / 6)  # "billing", "service" of six stems each
    assert not _flagged(_judged(THURSDAYS, with_vectors=True))


@pytest.mark.parametrize("pair", LOOKALIKES, ids=[p[1][:32] for p in LOOKALIKES])
def test_another_fact_of_the_same_subject_is_no_contradiction(pair: tuple[str, str]) -> None:
    assert not _flagged(_judged(pair, with_vectors=True))
    assert not _flagged(_judged(pair, with_vectors=False))


def test_the_neighbours_never_lift_a_look_alike_the_words_leave_alone() -> None:
    """Of every look-alike, the judge with the nearest labelled changes flags none that it leaves without them,
    but one known pair (below); the pair the rules once flagged is flagged by neither the rules nor the judge."""
    for pair in [*LOOKALIKES, RULES_FLAG]:
        assert _flagged(_judged(pair, with_vectors=True)) <= _flagged(_judged(pair, with_vectors=False)), pair
    assert not _flagged(_judged(RULES_FLAG, with_vectors=True))
    assert not _flagged(_judged(RULES_FLAG, with_vectors=False))


@pytest.mark.xfail(strict=True, reason="a known false alarm: half its content stems shared, the gate half open")
def test_the_sales_dashboard_s_tool_is_no_contradiction() -> None:
    assert not _flagged(_judged(STILL_LIFTED, with_vectors=True))

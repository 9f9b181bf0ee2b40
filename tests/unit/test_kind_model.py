"""The local kind model on natural phrasing: measured floors on the committed test part of bench/data/kinds
(never used to fit it), read through the vectors the classifier gets (the embedder's stored passage vector:
the text alone, or with the memory's date in front), agreement of the committed vectors with the in-process e5
model, determinism and the explanation in the reasons."""

from __future__ import annotations

import numpy as np
import pytest

from engram.domain.classification import KIND_TEXT_LIMIT, classify
from engram.domain.classification.kind_model import guess
from engram.domain.content import passage
from engram.domain.values import BUILT_IN_KINDS
from engram.pipeline import kind_model
from engram.pipeline.classify import classify_locally
from engram.pipeline.kind_model import embed, load_kind_model
from tests.support.kinds_data import CHATTER, load
from tests.support.kinds_eval import (
    Scores,
    date_for,
    dated_vectors,
    local_classifier,
    rules_classifier,
    score,
    stored_vectors,
)

# a little below what bench/kinds.py measures on the test part (docs/benchmarks.md), so noise doesn't flap
ACCURACY_FLOOR = {"undated": 0.87, "dated": 0.85}  # measured 0.876 (333 of 380) and 0.858 (326 of 380)
RECALL_FLOOR = 0.70  # every kind; the lowest measured is doctrine's 0.72 (dated)
PRECISION_FLOOR = 0.75  # every kind; the lowest measured is doctrine's 0.76 (dated)
CHATTER_RECALL_FLOOR = 0.90
FALSE_CHATTER_CEILING = 0.02
CALIBRATION_ERROR_CEILING = 0.06

ISSUE_EXAMPLES = [  # the sentences of the report that the cue phrases got wrong
    ("I really prefer tea over coffee in the mornings", "preference"),
    ("Dark mode for everything, please", "preference"),
    ("We're going to drop the v1 endpoints next quarter", "decision"),
    ("Card numbers are never written to logs", "invariant"),
    ("Clone the repo, run the setup script, then start the dev server", "procedure"),
]


@pytest.fixture(scope="module", params=["undated", "dated"])
def test_part(request: pytest.FixtureRequest) -> Scores:
    vectors = stored_vectors() if request.param == "undated" else dated_vectors()
    scores = score(load("test"), local_classifier(vectors))
    scores.vectors = request.param
    return scores


def test_the_split_is_fixed_and_the_model_never_saw_the_test_part() -> None:
    test, tune = load("test"), load("tune")
    assert len(test) + len(tune) >= 400 and {i.text for i in test}.isdisjoint(i.text for i in tune)
    assert {i.label for i in test} == {*BUILT_IN_KINDS, CHATTER}
    assert set(load_kind_model().example_texts) == {i.text for i in tune}


def test_kind_accuracy_on_the_test_part(test_part: Scores) -> None:
    assert test_part.total >= 200
    assert test_part.accuracy >= ACCURACY_FLOOR[test_part.vectors]


def test_no_kind_falls_below_the_precision_and_recall_floors(test_part: Scores) -> None:
    assert set(test_part.kinds) == BUILT_IN_KINDS
    for kind in test_part.kinds:
        assert test_part.recall(kind) >= RECALL_FLOOR, kind
        assert test_part.precision(kind) >= PRECISION_FLOOR, kind


def test_chatter_is_recognised_and_real_memories_are_not_taken_for_it(test_part: Scores) -> None:
    assert test_part.chatter_total >= 30
    assert test_part.chatter_recall >= CHATTER_RECALL_FLOOR
    assert test_part.false_chatter_rate <= FALSE_CHATTER_CEILING


def test_confidence_is_calibrated(test_part: Scores) -> None:
    assert test_part.calibration_error() <= CALIBRATION_ERROR_CEILING
    confident = [ok for confidence, ok in test_part.confidences if confidence >= 0.9]
    assert len(confident) >= 50 and sum(confident) / len(confident) >= 0.9


def test_the_cue_phrases_alone_stay_far_below_the_model() -> None:
    """The classifier before the kind model, on the same test part: the floors above are not a formality."""
    rules = score(load("test"), rules_classifier())
    assert rules.accuracy < ACCURACY_FLOOR["dated"] - 0.3 and rules.chatter_recall < CHATTER_RECALL_FLOOR


def test_the_committed_vectors_are_what_the_local_model_gives() -> None:
    vectors, dated = stored_vectors(), dated_vectors()
    for item in load("test")[::60]:
        assert float(embed(item.text) @ vectors[item.text]) > 0.999, item.text
        [stored] = kind_model.embed_many([passage(item.text, date_for(item.text))])  # as the embedder stores it
        assert float(stored @ dated[item.text]) > 0.999, item.text
        assert float(stored @ vectors[item.text]) < 0.99  # the date changes the vector


@pytest.mark.parametrize(("content", "kind"), ISSUE_EXAMPLES)
def test_the_reported_sentences_get_their_kind(content: str, kind: str) -> None:
    assert classify(content).kind == "fact"  # the cue phrases alone miss them
    result = classify_locally(content, (), sorted(BUILT_IN_KINDS), local=True)
    assert result.kind == kind and result.retention != "noise"


@pytest.mark.parametrize("content", ["hey, how's it going?", "Lovely, thank you so much 🙏", "ok let me think"])
def test_chatter_that_is_no_cue_phrase_is_noise(content: str) -> None:
    result = classify_locally(content, (), sorted(BUILT_IN_KINDS), local=True)
    assert result.retention == "noise" and 0 < result.retention_confidence <= 0.95


def test_the_answer_is_deterministic_and_names_its_nearest_examples() -> None:
    content = "Honestly I'd go for the quieter hotel even if it's further out."
    first = classify_locally(content, (), sorted(BUILT_IN_KINDS), local=True)
    assert classify_locally(content, (), sorted(BUILT_IN_KINDS), local=True) == first
    assert first.kind == "preference" and first.classifier == "rules"
    assert first.reasons[0].startswith("kind model: preference ")
    nearest = next(r for r in first.reasons if r.startswith("nearest examples: "))
    assert nearest.count("(") == 3 and "hotel" in nearest.lower()  # three examples, the closest about hotels


def test_the_rules_cues_stay_in_the_reasons() -> None:
    result = classify_locally("We decided to keep the old dashboard.", (), sorted(BUILT_IN_KINDS), local=True)
    assert result.kind == "decision" and "kind cue 'we decided'" in result.reasons


def test_only_the_tenants_kinds_are_suggested() -> None:
    model, vectors = load_kind_model(), stored_vectors()
    text = "Card numbers are never written to logs."
    vector = vectors.get(text, embed(text))
    assert guess(model, text, vector).kind == "invariant"
    narrowed = guess(model, text, vector, kinds={"fact", "decision", "my_custom_kind"})
    assert narrowed.kind in {"fact", "decision"} and 0 < narrowed.confidence <= 1
    assert guess(model, text, vector, kinds={"my_custom_kind"}).kind == "invariant"  # none known: all kinds


def test_the_model_reads_a_bounded_prefix() -> None:
    model = load_kind_model()
    head = "Clone the repo, run the setup script, then start the dev server."
    tail = " filler" * 20_000  # one long line without commas: the rule features read only the prefix
    vector = embed(head)
    short = classify(head, model=model, vector=vector)
    long = classify(head + tail, model=model, vector=vector)
    assert len(head + tail) > KIND_TEXT_LIMIT * 100
    assert (long.kind, long.taxonomy_confidence) == (short.kind, short.taxonomy_confidence)


def test_a_vector_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match="vector has shape"):
        guess(load_kind_model(), "anything", np.zeros(8, dtype=np.float32))

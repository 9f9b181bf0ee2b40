"""The keyword score of hybrid recall: each query word weighted by its rarity among the tenant's memories (BM25
with b = 0), the tenant switch that turns it off, and the reason a hit gives."""

from __future__ import annotations

import math

import pytest

from engram.domain import scoring
from engram.errors import ValidationFailed


def test_a_rarer_word_weighs_more_and_every_word_weighs_something() -> None:
    rarities = [scoring.term_rarity(df, 1_000) for df in (1, 10, 100, 500, 999, 1_000)]
    assert rarities == sorted(rarities, reverse=True)
    assert rarities[0] == pytest.approx(math.log(1 + 999.5 / 1.5))
    assert all(r > 0 for r in rarities)
    # a count capped below the memories' (DOCUMENT_FREQUENCY_CAP) never makes N smaller than df
    assert scoring.term_rarity(50, 10) == scoring.term_rarity(50, 50)


def test_one_rare_word_outweighs_a_common_word_repeated() -> None:
    rare = {"camp": (scoring.term_rarity(3, 600), 1)}
    common = {"melani": (scoring.term_rarity(300, 600), 4)}
    assert scoring.keyword_relevance(rare) > scoring.keyword_relevance(common)
    # repeats saturate: four uses of a word count less than twice two
    once = scoring.keyword_relevance({"camp": (2.0, 1)})
    assert once == pytest.approx(2.0)
    assert scoring.keyword_relevance({"camp": (2.0, 4)}) < 2 * scoring.keyword_relevance({"camp": (2.0, 2)})
    assert scoring.keyword_relevance({}) == 0.0
    assert scoring.keyword_relevance({"camp": (2.0, 1), "lake": (1.0, 1)}) == pytest.approx(3.0)


def test_the_reason_names_the_matched_words_rarest_first() -> None:
    terms = {"melani": (0.69, 3), "camp": (3.21, 1)}
    assert scoring.keyword_reason(4.0, terms) == "keyword match 4.000 ('camp' rarity 3.21, 'melani' rarity 0.69 ×3)"


def test_the_tenant_switch_is_on_by_default_and_takes_only_true_or_false() -> None:
    assert scoring.RecallWeights().keyword_idf is True
    assert scoring.parse_recall_weights({"keyword_idf": False}).keyword_idf is False
    assert scoring.parse_recall_weights({"keyword_idf": False}).as_dict()["keyword_idf"] is False
    with pytest.raises(ValidationFailed):
        scoring.parse_recall_weights({"keyword_idf": 1})

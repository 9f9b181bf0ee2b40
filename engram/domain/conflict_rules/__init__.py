"""Conflict rules: label a new memory against a near live one as duplicate, refinement or contradiction.

The conflicts consumer hands over two texts of the same scope (of any kinds but the episodic ones) with their
cosine similarity. Before the rules, an abbreviation in one text of words the other spells out ("DB" /
"database", "appt" / "appointment", "k8s" / "Kubernetes", "QBR" / "quarterly business review") is read as those
words (``texts.align_abbreviations``).
``judge`` tries these rules in order; the first that fires gives the verdict:

1. ``same_text`` — equal once case, spacing and punctuation are normalised: duplicate, at any similarity.
2. ``exclusive_predicate:<predicate>`` — the same subject holds two different values of a predicate that takes
   one value at a time (lives in, works at / for, is based / located in, reports to, prefers, uses … as
   default, 's favourite …): contradiction. Verbs of one relation fill one slot ("lives in", "resides in", "is
   based in", "is headquartered in", and "moved to" between similar texts; "works at", "teaches at", "is
   employed by", "is on the staff of"; "grew up in", "was raised in", "was brought up in"). Fires at any
   similarity, since "Alice lives in Paris" and "Alice lives in Berlin" may embed far apart. A new value named
   with the old one right after it ("based in Berlin, Germany"), or a place against a country, region or
   continent (``places.py``: "lives in Norway" / "lives in Bergen"), narrows it, and contradicts nothing.
   Below ``floor`` only ``filled_slot`` (below) is tried besides it.
3. ``negation`` — a negated clause of one text ("not", "never", "no longer", "isn't", …) states a claim that
   a clause of the other affirms, and the texts share most words (``SAME_SUBJECT``): contradiction. A claim
   of one word counts only in a clause the negation opens ("…on Tuesdays, not Fridays").
4. ``numbers_differ:<kind>`` — the same slot (same kind of quantity, next to the same word) carries another
   number, date, version, amount of money, measure or frequency ("twice a week" / "daily"): contradiction; not
   when each value is said of something the other text does not name ("the main database" / "the analytics
   database"), nor when one value is a bound the other lies within ("under $10k" / "$8,500", ``bounds.py``).
   Then the slot rules (``slots.py``): ``replaced``, ``changed_value`` (a month and a date in it, a wide
   place and a narrower one, a value within a bound are not another value), ``opposite_value`` and
   ``swapped_name`` (one name for one job swapped for another in a reworded frame: "We host the site on
   Netlify" / "The site is hosted on Vercel"); then ``filled_slot`` (``fillers.py``: one short sentence each
   fills one slot with a name or a place, whatever the verb or form: "Our CRM is HubSpot" / "CRM:
   Salesforce", "The repo is hosted on GitLab" / "The repo lives on Bitbucket"), which also fires below
   ``floor``, being as strict about its subject as an exclusive predicate; then ``moved_place``
   (``locations.py``: one thing put in two places with other verbs of where, "The stamp club meets in St Jude's
   church hall" / "The stamp club meets in the Red Lion's back room") and ``taken_over`` (``handovers.py``: "Leah
   manages the front desk" / "Sam has taken over the front desk").
5. ``same_words`` (same content words and values) or ``near_identical`` (similarity ≥ 0.97, same values, same
   polarity): duplicate.
6. ``containment`` — the new text keeps the existing one's claim (most of its content words, all its values)
   and adds detail: refinement.

Anything else is None: unrelated, or compatible. So is a contradiction of an existing memory that says what held
once ("used to", "back in the 90s") by a new one that says what holds now, and one between two numbered things
("Plot 9 …" / "Plot 10 …"): ``rules.not_one_claim``.
``judge_with_learned`` (``learned.py``) is what the conflicts
consumer calls: ``judge``, then, when its verdict is not a contradiction, the learned judge, whose
``learned_judge`` contradiction comes from a logistic regression over word features of two statements and their
nearest labelled changes (``neighbours.py``; weights shipped as ``learned_judge.json``, the labelled directions as
``learned_references.npz``, docs/adr/0008-learned-contradiction-judge.md). ``outcome`` turns a verdict
into an action by authority, and ``parse_llm_verdict`` reads an LLM judge's answer, refusing anything malformed.

The rules are bounded (``work.py``): past ``MAX_ANALYSED_CHARS`` characters only the negation rule reads the
beginning of the texts; the rules comparing values or claims pairwise are skipped past ``MAX_QUANTITIES``
quantities or ``MAX_CLAIMS`` claims in a text; every judgement stops after ``MAX_STEPS`` steps. Each limit can
only take a verdict away, and says so in the ``Work`` passed to ``judge``.
"""

from __future__ import annotations

from engram.domain.conflict_rules.learned import LEARNED_RULE, judge_with_learned
from engram.domain.conflict_rules.model_verdict import EXPLANATION_LIMIT, LLM_JUDGE_SCHEMA, LLM_RULE, parse_llm_verdict
from engram.domain.conflict_rules.rules import (
    CONTAINMENT,
    DEFAULT_FLOOR,
    NEAR_IDENTICAL,
    NEGATION_COVER,
    SAME_SUBJECT,
    judge,
)
from engram.domain.conflict_rules.verdicts import ACTIONS, LABELS, Outcome, Verdict, outcome
from engram.domain.conflict_rules.work import MAX_ANALYSED_CHARS, MAX_CLAIMS, MAX_QUANTITIES, MAX_STEPS, Work

__all__ = [
    "ACTIONS",
    "CONTAINMENT",
    "DEFAULT_FLOOR",
    "EXPLANATION_LIMIT",
    "LABELS",
    "LEARNED_RULE",
    "LLM_JUDGE_SCHEMA",
    "LLM_RULE",
    "MAX_ANALYSED_CHARS",
    "MAX_CLAIMS",
    "MAX_QUANTITIES",
    "MAX_STEPS",
    "NEAR_IDENTICAL",
    "NEGATION_COVER",
    "SAME_SUBJECT",
    "Outcome",
    "Verdict",
    "Work",
    "judge",
    "judge_with_learned",
    "outcome",
    "parse_llm_verdict",
]

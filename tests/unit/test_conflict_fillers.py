"""``filled_slot`` of the conflict rules: two short texts that each fill one slot with a name, whatever verb or
form they use (a copula, a colon, "is done by", "lives on", "for …"), flagged when the names differ; and the
look-alikes it must leave alone (another thing of the same owner, two relations of one person, two jobs of one
thing, a speaker's turn, a wide place, another time, an addition or a plan). The pairs here are not those of
bench/data/conflicts."""

from __future__ import annotations

import pytest

from engram.domain.conflict_rules import judge

SIMILAR = 0.92

CONTRADICTIONS = [
    ("Our payroll provider is Gusto.", "Payroll is handled by Deel."),  # a slot noun dropped, another verb
    ("The blog is hosted on Ghost.", "The blog lives on Medium."),  # another verb, the same preposition
    ("Lena's piano teacher is Mr. Okoye.", "Lena's teacher is Ms. Brandt."),  # a role word dropped, titles aside
    ("The release captain today is Ivo.", "today's release captain: Noor"),  # a terse note after a colon
    ("Mateo was set up in Quito.", "Mateo was set up in Cusco."),  # a person: the same verb and preposition
    ("Our error tracker is Sentry.", "We moved to Rollbar for error tracking."),  # the job as a purpose
    ("The wedding will be held in Sintra.", "Wedding location: Cascais."),  # "location" names the slot
    ("Our CDN is Fastly.", "CDN: Cloudflare."),  # an acronym is a thing, not a speaker
    ("The newsletter runs on Substack.", "The newsletter was rebuilt on Ghost."),  # a passive is no past
    ("The support inbox is answered by Tomás.", "support inbox: Eilidh"),
    # a thing's place said in common words
    ("The bike pump is in the garden shed.", "We keep the bike pump under the stairs."),
    ("I keep the spare charger in the kitchen drawer.", "the spare charger is in my backpack"),
]

LOOK_ALIKES = [
    ("Bruno lives in Porto.", "Bruno's daughter lives in Braga."),  # another person of the same owner
    ("My aunt lives in York.", "My aunt's cat is called Pepper."),  # another thing of the same owner
    ("Jonas works with Petra.", "Jonas lives with Greta."),  # two relations of one person
    ("We host the app on Render.", "We host the status page on Instatus."),  # two things hosted
    ("The shop runs on Shopify.", "The shop was designed by Northwind."),  # two jobs of one thing
    ("Ana: Hey Luis!", "Ana: Thanks Marta!"),  # a speaker's turns
    ("Our office is in Portugal.", "Our office is in Braga."),  # a wide place made precise
    ("Rui used to live in Faro.", "Rui lives in Evora."),  # another time
    ("Our accountant is Helen Price.", "We might move our accounting to Ledgerly."),  # only a plan
    ("The team chat is Slack.", "The team also uses Zulip for chat."),  # an addition
    ("The kids' bedtime story is read by Dad.", "The kids' bath is run by Mum."),  # two chores
    ("I eat porridge in the morning.", "I eat soup in the evening."),  # times, and other things
    ("The reunion is in Ireland.", "The reunion is at a hotel near Galway."),  # a wide place made precise
    ("Our cat sleeps in the laundry basket.", "Our cat sleeps in the laundry basket by the radiator."),  # detail
    ("The bike pump is in the garden shed.", "Kasia is in the garden shed."),  # someone else
]


@pytest.mark.parametrize(("existing", "new"), CONTRADICTIONS)
def test_one_slot_filled_with_two_names_is_a_contradiction(existing: str, new: str) -> None:
    verdict = judge(existing, new, SIMILAR)
    assert verdict is not None and verdict.label == "contradiction", verdict
    assert verdict.rule == "filled_slot", verdict


@pytest.mark.parametrize(("existing", "new"), LOOK_ALIKES)
def test_look_alikes_of_a_filled_slot_are_not_contradictions(existing: str, new: str) -> None:
    verdict = judge(existing, new, SIMILAR)
    assert verdict is None or verdict.label != "contradiction", verdict


def test_filled_slot_names_the_slot_and_both_values() -> None:
    verdict = judge("Our payroll provider is Gusto.", "Payroll is handled by Deel.", SIMILAR)
    assert verdict is not None and verdict.rule == "filled_slot"
    assert '"Gusto"' in verdict.explanation and '"Deel"' in verdict.explanation
    assert verdict.explanation.startswith("payroll provider:")


def test_filled_slot_fires_below_the_similarity_floor() -> None:
    """Like an exclusive predicate: a terse note and a sentence of one slot may embed apart ("The CFO is …" /
    "Chief financial officer: …"), and the rule asks for the same subject words anyway."""
    verdict = judge("Our CDN is Fastly.", "CDN: Cloudflare.", 0.82, floor=0.85)
    assert verdict is not None and verdict.rule == "filled_slot"
    assert judge("We host the app on Render.", "We host the status page on Instatus.", 0.82, floor=0.85) is None

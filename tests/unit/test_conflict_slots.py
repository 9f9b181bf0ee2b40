"""The slot rules of the conflict rules (changed_value, replaced, opposite_value, swapped_name) and the
cessation reading of the negation rule ("quit", "stopped", "gave up", "not … anymore"): what they flag, with a
reason a reviewer can read, and the look-alikes they must leave alone. The pairs here are not those of
bench/data/conflicts."""

from __future__ import annotations

import pytest

from engram.domain.conflict_rules import Work, judge
from engram.domain.conflict_rules.quantities import find_quantities
from engram.domain.conflict_rules.texts import align_abbreviations, analyse
from engram.domain.conflict_rules.words import stem

SIMILAR = 0.92

CONTRADICTIONS = [
    # (existing, new, rule)
    ("The piano tuner is Maurice.", "The piano tuner is Beatrix.", "changed_value"),
    ("Our registrar is Namecheap.", "Our registrar is Gandi now.", "changed_value"),
    ("The board meets on Wednesdays.", "The board meets on Fridays.", "changed_value"),
    ("The hallway is painted yellow.", "The hallway is painted grey.", "changed_value"),
    ("Ingrid's physio is Dr. Haddad.", "Ingrid's physio is Dr. Moreau.", "changed_value"),
    ("The printer sits in the copy room.", "The printer sits in the lobby now.", "filled_slot"),  # read since 12-03
    ("Deployments are approved by Kofi.", "Mirela is who approves deployments.", None),  # reordered, no copula
    ("The build server runs Jenkins.", "We moved the build server from Jenkins to Buildkite.", "replaced"),
    ("Invoices are sent with QuickBooks.", "We replaced QuickBooks with Xero for invoices.", "replaced"),
    ("Alerts page through Opsgenie.", "Alerts page through PagerDuty instead of Opsgenie.", "replaced"),
    ("The dark_launch flag is on for staff.", "The dark_launch flag is off for staff.", "opposite_value"),
    ("Priti plays in the chess club.", "Priti quit the chess club.", "negation"),
    ("I take the 7:40 train to work.", "I stopped taking the 7:40 train to work.", "negation"),
    ("I'm learning the cello.", "I gave up learning the cello.", "negation"),
    ("I'm vegan.", "I'm not vegan anymore.", "negation"),
    ("Team chat is on Slack.", "team chat is on discord now", "changed_value"),
    ("The on-call lead is Farid.", "Yusuf is the new on-call lead.", "changed_value"),
    ("Our newsletter goes out through Substack.", "Substack was replaced by Ghost for the newsletter.", "replaced"),
    ("Our monitoring runs on Nagios.", "We migrated monitoring off Nagios to Prometheus.", "replaced"),
    # a code whose last part mixes letters and digits is one word; "yet" adds nothing to a denial (2026-12-02 (night))
    ("Our Redis cluster is in asia-south1.", "The Redis cluster runs in europe-north1.", "changed_value"),
    ("Dario can drive.", "Dario cannot drive yet.", "negation"),
    # an opposite in a reworded text: words reordered, one dropped (2026-12-02 (night))
    ("Two-factor login is mandatory for admins.", "admins: two-factor login optional", "opposite_value"),
    # periods written as adverbs (missed before 2026-12-02's second batch)
    ("I swim 2 km every day.", "I swim 3 km daily.", "numbers_differ:length"),
    ("Ad spend is $3k every month.", "ad spend is $5k monthly", "numbers_differ:money"),
    ("The gardener comes once a month.", "The gardener comes fortnightly.", "numbers_differ:frequency"),
    ("Feed the fish twice a day.", "Feed the fish three times daily.", "numbers_differ:frequency"),
    ("Choir practice is every Tuesday.", "Choir practice is every Thursday.", "numbers_differ:frequency"),
    # abbreviations of the other text's words
    ("The staging database has 3 replicas.", "staging DB has 5 replicas", "numbers_differ:count"),
    ("My dentist appointment is on Monday.", "dentist appt is wednesday", "changed_value"),
    ("The Kubernetes version is 1.28", "k8s version is 1.30", "numbers_differ:number"),
    ("The annual general meeting is on the 3rd.", "AGM is on the 10th.", "numbers_differ:number"),
    # one relation said with other verbs
    ("The bakery is owned by Mr. Haines.", "The bakery belongs to the Costa family.", "exclusive_predicate:belongs to"),
    ("Kai reports to Dana.", "Kai's manager is Bruno.", "exclusive_predicate:'s manager"),
    ("The hostel is run by Inez.", "Tariq manages the hostel.", "exclusive_predicate:manages"),
    ("Pia works at Zalando.", "Pia is employed by Otto.", "exclusive_predicate:is employed by"),
    # ranks, quarters, noon; "stepped down"; a derived noun
    ("The archive room is on the fourth floor.", "The archive room is on the second floor.", "changed_value"),
    ("The audit is due in Q2.", "The audit is due in Q4.", "changed_value"),
    ("Lunch is served at noon.", "Lunch is served at 1pm.", "numbers_differ:clock"),
    ("Noah is on the parish council.", "Noah stepped down from the parish council.", "negation"),
    ("I'm subscribed to Wired.", "Cancelled my Wired subscription.", "negation"),
    # one measure each, the thing measured shared; "these days" and "down to" say nothing of the subject
    ("I weigh about 70 kg.", "I'm at 66 kg these days.", "numbers_differ:mass"),
    ("The weekly retro lasts 45 minutes.", "Retro runs for 60 minutes.", "numbers_differ:duration"),
    # a period word of the clause makes an amount a rate
    ("Our yearly insurance premium is $900.", "The insurance premium costs us $1,100 a year.", "numbers_differ:money"),
    ("Mum takes 5 mg of ramipril daily.", "Mum's ramipril dose is 10 mg a day now.", "numbers_differ:mass"),
    # codes are values; moved over to another name
    ("The search cluster runs in ap-south-1.", "Search cluster runs in eu-central-1.", "changed_value"),
    ("I track my runs in Strava.", "I've switched my runs over to Garmin Connect.", "replaced"),
    # a reordered frame around one name each, the new text saying it changed
    ("Parcels are shipped with DHL.", "We ship parcels with UPS now.", "changed_value"),
    # one name for one job swapped for another, the frame reordered or reworded, without a word saying it
    # changed (a look-alike until 2026-12-02 afternoon: the labelled pairs call it "replaced")
    ("Parcels are shipped with DHL.", "We ship parcels with UPS.", "swapped_name"),
    ("We host the docs site on Netlify.", "The docs site is hosted on Cloudflare Pages.", "swapped_name"),
    ("Invoices are handled by Sage.", "We use Xero to handle invoices.", "swapped_name"),
    # one place slot whatever the verb: lives in, is based in, is headquartered in, moved to, grew up in
    ("Priya lives in Porto.", "Priya is based in Braga.", "exclusive_predicate:is based in"),
    ("Our agency is headquartered in Leeds.", "Our agency is based in York.", "exclusive_predicate:is based in"),
    ("Dev moved to Malmö.", "Dev lives in Lund.", "exclusive_predicate:lives in"),
    ("I grew up in Kent.", "I grew up in Devon.", "exclusive_predicate:grew up in"),
    ("Ana teaches at Hillcrest School.", "Ana works at Riverside Academy.", "exclusive_predicate:works at"),
    # a name after a contracted copula; a password is a value
    ("We're on the Basic plan with Zoom.", "We're on the Business plan with Zoom.", "changed_value"),
    ("The router password is falcon88.", "The router password is now otter31.", "changed_value"),
    # a value outside the bound, a month the date is not in
    ("The hall holds under 200 guests.", "The hall holds 250 guests.", "numbers_differ:count"),
    ("The launch is in March.", "The launch is on April 3.", "changed_value"),
    # a swapped name with little of the job in common, the new text saying it changed
    ("I buy wine from Majestic.", "I get my wine from Laithwaites now.", "swapped_name"),
    # one date each, about the same thing
    ("The visa expires in May 2028.", "Our visa is valid until October 2028.", "numbers_differ:date"),
]

LOOK_ALIKES = [
    ("The shop is open.", "The shop is closed on Sundays."),  # an opposite said of a narrower time
    ("The dark mode flag is enabled for staff.", "dark mode flag: disabled for customers"),  # for other people
    # two slots changed at once: another fact
    ("Ada's violin lessons are on Mondays.", "Ada's judo lessons are on Saturdays."),
    ("The staging queue has 4 workers.", "The billing queue has 16 workers."),
    # the run is the subject, not the value
    ("The gala is on May 2.", "Tomas's birthday is on May 2."),
    ("Rania reports to Igor.", "Igor reports to the COO."),
    # something added, planned or visited, not replaced
    ("We use Figma for design.", "We also use Miro for workshops."),
    ("Lena works at Siemens.", "Lena might move to Bosch next year."),
    ("Omar lives in Cairo.", "Omar is visiting Rome this week."),
    ("Backups go to Backblaze.", "Backups go to Backblaze and are kept for 90 days."),
    # the same value written twice, or a paraphrase
    ("The retro is on March 3", "The retro is on 2026-03-03"),
    ("Our vet is Dr. Sato.", "Dr. Sato is our vet."),
    ("Priti quit the chess club.", "Priti is no longer in the chess club."),
    # a cessation denied affirms
    ("I play in the chess club.", "I won't quit the chess club."),
    # chat: openings and sign-offs carry no values
    ("Joanna: Sure thing Nate! See you later!", "Joanna: Thanks Nate! See you later!"),
    ("Nate: Bye Joanna! Take care!", "Nate: See you then! Take care!"),
    ("Mia: Sure thing! Talk soon!", "Mia: Sure thing! Bye for now!"),
    ("Deborah: You got this!", "Deborah: I really want to eat this now."),
    ("Jolene: I'm finding my zen again!", "Jolene: Now I'll see when it's more convenient for me."),
    # a date of another thing the new text names apart
    ("The fair is on June 9.", "The setup starts on June 7, two days before the fair."),
    # identifiers are not values
    ("We keep the logs in S3", "We keep the logs in S4"),
    # each value said of another thing (flagged before 2026-12-02's second batch)
    ("Backups of the orders table run at 1am.", "Backups of the users table run at 3am."),
    ("My niece is 4 years old.", "My nephew is 6 years old."),
    # a place made more precise, the wider one kept next to it (flagged before)
    ("Our warehouse is located in France.", "Our warehouse is located in Lyon, France."),
    ("My cousin lives in Canada.", "My cousin lives in Halifax in Canada."),
    # a frequency that says which day, against one that does not; an adjective is no frequency
    ("I call my sister once a week.", "I call my sister every Sunday."),
    ("Our quarterly report goes to Dana.", "Our quarterly report goes to Dana and Li."),
    # the relations: a paraphrase, a preposition after the verb, a participle without "is"
    ("The bakery is owned by Mr. Haines.", "Mr. Haines owns the bakery."),
    ("This road leads to the lake.", "The trail leads to the lake."),
    ("Tom manages the store.", "Tom manages to relax on Sundays."),
    ("I run by the river in the morning.", "I run by the canal in the morning."),
    # reordered around one name each, the new text adding the other: two facts hold
    ("Parcels are shipped with DHL.", "We also ship parcels with UPS."),
    ("Parcels are shipped with DHL.", "We might ship parcels with UPS."),
    # a wide place and one that may lie inside it; a date in the month; a value within a bound
    ("Our data centre is in Ireland.", "Our data centre is in Dublin."),
    ("Priya lives in Portugal.", "Priya is based in Braga."),
    ("The launch is in March.", "The launch is on March 3."),
    ("The hall holds under 200 guests.", "The hall holds 180 guests."),
    ("The repo needs at least 2 reviewers.", "The repo needs 3 reviewers."),
    ("I buy wine from Majestic.", "I get my wine from Laithwaites too."),
    ("The visa expires in May 2028.", "The passport expires in October 2028."),
    # chat turns: a name in a clause of its own, a contracted "that's" before an exclamation
    ("Sam: Thanks, Priya. Any tips on meal planning?", "Sam: I'm trying the Mealime app for meal planning. Any tips?"),
    ("Kim: That's awesome! Were you playing or watching?", "Kim: Wow, that's amazing! Winning must have been fun!"),
    # a name swapped, but said of someone or something else of the same owner
    ("Tom lives in Bath.", "Tom's brother lives in Bristol."),
    ("Tom's tennis lessons are with Rafa.", "Tom's golf lessons are with Ernie."),
    # a date inside the season, quarter or half named before
    ("The wedding is in the summer.", "The wedding is on July 19."),
    ("The migration is planned for Q3.", "The migration is planned for August 4."),
    # one measure each, but of two things
    ("Our weekly sync lasts 30 minutes.", "Our monthly review lasts 90 minutes."),
    # "moved to" a place, with no name of the existing text it replaces
    ("I went to the Pride parade with Mel.", "I went to the museum and then moved to the park."),
    # chat turns (LoCoMo false alarms of a first version): "own" after a possessive, a bare answer
    ("Jon: Thanks, Gina! I love running my own studio.", "Jon: Nice, Gina! So glad I can enjoy it with my own studio."),
    ("John: Thanks, Maria! Three times a week; it keeps us on track.", "John: Thanks, Maria! I see them once a week."),
    # "a second" adds one when nothing was ranked
    ("The printer is on the third floor.", "A second printer is on the third floor."),
    # texts that differ in an id as well as a name speak of two things (bench/latency.py's probes, flagged by a
    # first version of swapped_name and disputed out of recall); a list of names is not one job's value; an id
    # of mixed letters and digits is not a value
    ("Benchmark probe 0dd263c0: Esther visits Lisbon.", "Benchmark probe a157a643: Esther visits Seoul."),
    (
        "Benchmark probe e737da25: a note about Carol and Seoul.",
        "Benchmark probe 0bb04a77: a note about Hiro and Lima.",
    ),
    ("Probe 69cebd64 of the latency benchmark (Hiro, Lima).", "Probe a8e4aafd of the latency benchmark (Hiro, Lima)."),
    ("Benchmark probe efdbd13e: Farid visits Lima.", "Benchmark probe 0387eea8: Farid visits Lima."),
]


@pytest.mark.parametrize(("existing", "new", "rule"), CONTRADICTIONS)
def test_slot_contradictions(existing: str, new: str, rule: str | None) -> None:
    verdict = judge(existing, new, SIMILAR)
    if rule is None:  # documented limits: a reordering without a copula, a change of common nouns
        assert verdict is None or verdict.label != "contradiction"
        return
    assert verdict is not None and verdict.label == "contradiction", verdict
    assert verdict.rule == rule, verdict
    assert verdict.explanation and len(verdict.explanation) < 200


@pytest.mark.parametrize(("existing", "new"), LOOK_ALIKES)
def test_look_alikes_are_not_contradictions(existing: str, new: str) -> None:
    verdict = judge(existing, new, SIMILAR)
    assert verdict is None or verdict.label != "contradiction", verdict


def test_changed_value_names_both_values() -> None:
    verdict = judge("Leo's fencing coach is Marta.", "Leo's fencing coach is Dan.", SIMILAR)
    assert verdict is not None and verdict.rule == "changed_value"
    assert '"Marta"' in verdict.explanation and '"Dan"' in verdict.explanation


def test_replaced_names_what_went_and_what_came() -> None:
    verdict = judge("Our CRM is HubSpot.", "We switched the CRM from HubSpot to Pipedrive.", SIMILAR)
    assert verdict is not None and verdict.rule == "replaced"
    assert "HubSpot" in verdict.explanation and "Pipedrive" in verdict.explanation


def test_changed_value_needs_the_similarity_floor() -> None:
    # (two names after "is" are filled_slot's too, which fires below the floor like an exclusive predicate)
    assert judge("The board meets on Wednesdays.", "The board meets on Fridays.", 0.84, floor=0.85) is None


def test_moved_to_is_a_place_claim_only_between_similar_texts() -> None:
    assert judge("We live in Leeds.", "We moved to Slack.", 0.5, floor=0.85) is None
    verdict = judge("Dev lives in Lund.", "Dev moved to Malmö.", 0.5, floor=0.85)
    assert verdict is None  # "moved to" also names tools ("CI moved to GitHub Actions"): not below the floor


def test_swapped_name_names_both_values() -> None:
    verdict = judge("We host the docs site on Netlify.", "The docs site is hosted on Cloudflare Pages.", SIMILAR)
    assert verdict is not None and verdict.rule == "swapped_name"
    assert '"Netlify"' in verdict.explanation and '"Cloudflare Pages"' in verdict.explanation


def test_codes_of_letters_and_digits_after_a_hyphen_are_one_word() -> None:
    assert [t.text for t in analyse("It runs in europe-west4, not us-central1 or eu-west-1.").tokens][3:] == [
        "europe-west4",
        "not",
        "us-central1",
        "or",
        "eu-west-1",
    ]


def test_sentence_openings_are_not_names() -> None:
    tokens = analyse("Joanna: Sure thing. My GP is Dr. Okafor!").tokens
    opens = {t.text: t.opens for t in tokens}
    assert opens["Joanna"] and opens["Sure"] and opens["My"]
    assert not opens["Okafor"] and not opens["GP"]


def test_gave_up_reads_as_a_cessation() -> None:
    text = analyse("I gave up learning the cello")
    assert text.negated and text.clauses[0].negation == "gave up"


def test_changed_value_keeps_the_quantity_bound() -> None:
    ports = [8000 + i for i in range(150)]
    listed = "The open ports are " + " ".join(map(str, ports)) + "."
    changed = "The open ports are " + " ".join(map(str, [*ports[:-1], 9999])) + "."
    work = Work()
    assert judge(listed, changed, SIMILAR, work=work) is None
    assert work.gave_up is not None and "more than 100 quantities" in work.gave_up


def test_abbreviations_read_as_the_words_they_stand_for() -> None:
    old, new = align_abbreviations(
        analyse("The quarterly business review is at HQ."), analyse("QBR is at headquarters")
    )
    assert "quarterly business review" in new.normalised and "headquarters" in old.normalised
    # a word the other text has is no abbreviation, and neither is one that could stand for two words
    old, new = align_abbreviations(analyse("The dr said rest"), analyse("The doctor and the director said rest"))
    assert old.normalised == "the dr said rest"


def test_frequencies_are_read_as_times_per_day() -> None:
    def frequency(text: str) -> tuple[float | None, ...]:
        found = [q for _, _, q in find_quantities(text) if q.dimension == "frequency"]
        assert len(found) == 1, found
        return found[0].key

    assert frequency("twice a week") == (round(2 / 7, 6), None)
    assert frequency("every other day")[0] == 0.5 and frequency("three times a day")[0] == 3.0
    assert frequency("fortnightly")[0] == frequency("every two weeks")[0] == round(1 / 14, 6)
    assert frequency("every Sunday") != frequency("every Monday")
    assert not [q for _, _, q in find_quantities("the monthly bill") if q.dimension == "frequency"]


def test_irregular_past_forms_share_a_stem() -> None:
    assert stem("sent") == stem("send") and stem("led") == stem("leads") and stem("subscription") == stem("subscribed")

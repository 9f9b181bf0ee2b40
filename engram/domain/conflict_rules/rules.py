"""``judge``: the rules tried in order on two texts (see the package docstring), the first that fires giving
the verdict, within the bounds of ``work.py``."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

from engram.domain.conflict_rules.bounds import within_bound
from engram.domain.conflict_rules.chat import without_listener
from engram.domain.conflict_rules.claims import exclusive_predicate
from engram.domain.conflict_rules.fillers import filled_slot
from engram.domain.conflict_rules.handovers import taken_over
from engram.domain.conflict_rules.locations import moved_place
from engram.domain.conflict_rules.quantities import Quantity, same_value
from engram.domain.conflict_rules.slots import changed_value, opposite_value, replaced, swapped_name
from engram.domain.conflict_rules.texts import (
    Clause,
    Text,
    Token,
    align_abbreviations,
    analyse,
    analyse_head,
    different_names,
)
from engram.domain.conflict_rules.verdicts import Verdict
from engram.domain.conflict_rules.words import is_negation, overlap, past_against_present, says_no_longer, stem
from engram.domain.conflict_rules.work import MAX_ANALYSED_CHARS, MAX_QUANTITIES, OutOfWork, Work
from engram.domain.content import preview

DEFAULT_FLOOR = 0.80
NEAR_IDENTICAL = 0.97  # calibrated on MSRP (bench/calibrate_duplicates.py, docs/benchmarks.md)
CONTAINMENT = 0.8  # share of the existing memory's content words a refinement keeps
NEGATION_COVER = 0.8  # share of a negated clause's words the other text must affirm
SAME_SUBJECT = 0.6  # word overlap two texts need before their numbers or negations are compared
MEASURE_SUBJECT = 0.5  # the overlap that will do when each text measures one thing in one unit
ABBREVIATION_TOKENS = 80  # abbreviations are looked for between texts of at most this many words each


def judge(
    existing: str,
    new: str,
    similarity: float,
    *,
    floor: float = DEFAULT_FLOOR,
    work: Work | None = None,
    near_identical: float = NEAR_IDENTICAL,
) -> Verdict | None:
    """The label of ``new`` against the live ``existing`` memory, or None when they neither repeat, refine nor
    contradict each other, or when the rules could not tell within their bounds (then ``work.gave_up`` says
    why; without a ``work`` given, a fresh allowance of ``MAX_STEPS`` applies all the same). ``near_identical``
    is the similarity from which two texts with the same values and polarity are duplicates (a parameter for
    calibration, bench/calibrate_duplicates.py)."""
    work = Work() if work is None else work
    try:
        if len(existing) > MAX_ANALYSED_CHARS or len(new) > MAX_ANALYSED_CHARS:
            return _judge_heads(existing, new, similarity, floor, work)
        verdict = _judge(existing, new, similarity, floor, work, near_identical)
    except OutOfWork:
        return None
    if verdict is not None and verdict.label == "contradiction" and not_one_claim(existing, new):
        return None
    return verdict


def not_one_claim(existing: str, new: str) -> bool:
    """The two texts cannot contradict each other whatever they say: the existing one says what held once and
    the new one what holds now ("Back in the 90s the club met in the town hall" / "The club meets in the library
    now"), they open with two numbered things ("Rack 14 holds the database servers" / "Rack 15 holds the
    storage arrays"), or one names a deputy's, vice- or junior role and the other not. For texts the rules read
    whole (``MAX_ANALYSED_CHARS``)."""
    old, fresh = analyse(existing), analyse(new)
    if len(old.tokens) <= ABBREVIATION_TOKENS and len(fresh.tokens) <= ABBREVIATION_TOKENS:
        old, fresh = align_abbreviations(old, fresh)  # "VP" / "Vice President": one role
    return past_against_present(existing, new) or _numbered_apart(old, fresh) or _another_role(old, fresh)


# words that make a role another one: the deputy editor is not the editor
_ROLE_MODIFIERS = frozenset({"deputy", "vice", "associate", "junior", "trainee", "apprentice"})
_ROLE_PREFIXES = ("co-", "sub-")  # "co-founder", "sub-editor"


def _another_role(old: Text, new: Text) -> bool:
    """One text names a deputy's, a junior's, a vice- or co- role and the other none: "The Gazette's editor is
    Paula" / "The Gazette's deputy editor is Marcus" name two roles ("VP" / "Vice President" is read as one,
    the abbreviation aligned first)."""

    def modifiers(text: Text) -> set[str]:
        return {t.lower for t in text.tokens if t.lower in _ROLE_MODIFIERS or t.lower.startswith(_ROLE_PREFIXES)}

    return bool(modifiers(old)) != bool(modifiers(new))


def _numbered_apart(old: Text, new: Text) -> bool:
    """Both texts open with the same noun and a number right after it, and the numbers differ: "Plot 9 belongs to
    Gordon" / "Plot 10 belongs to Fatima" are two plots (not "The office is in Room 12" / "… in Room 14", where
    the numbered thing is the value)."""
    heads = []
    for text in (old, new):
        tokens = [t for t in text.tokens if t.lower not in ("the", "our", "my")]
        if len(tokens) < 2 or tokens[0].content is None or tokens[1].quantity is None:
            return False
        if tokens[1].quantity.kind != "number":
            return False
        heads.append((tokens[0].content, tokens[1].quantity))
    (noun_a, a), (noun_b, b) = heads
    return noun_a == noun_b and not same_value(a, b)


def _judge_heads(existing: str, new: str, similarity: float, floor: float, work: Work) -> Verdict | None:
    """Texts past ``MAX_ANALYSED_CHARS``: only the negation rule, on the whole clauses of their first
    ``MAX_ANALYSED_CHARS`` characters. A negated claim that the other text affirms is a contradiction wherever
    it is found; the other rules need all of both texts (an agreeing value further on would undo a verdict)."""
    work.skip(f"a text is longer than {MAX_ANALYSED_CHARS:,} characters: only the negation rule read its beginning")
    if not (math.isfinite(similarity) and similarity >= floor):
        return None
    old, fresh = analyse_head(existing, MAX_ANALYSED_CHARS), analyse_head(new, MAX_ANALYSED_CHARS)
    work.charge(len(old.tokens) + len(fresh.tokens))
    return _negation(old, fresh, work)


def _judge(
    existing: str, new: str, similarity: float, floor: float, work: Work, near_identical: float
) -> Verdict | None:
    # "Hey James! …" / "Hey John! …": a greeting's listener is no value of the text (``chat.without_listener``)
    old, fresh = analyse(without_listener(existing)), analyse(without_listener(new))
    work.charge(len(old.tokens) + len(fresh.tokens))
    if len(old.tokens) <= ABBREVIATION_TOKENS and len(fresh.tokens) <= ABBREVIATION_TOKENS:
        work.charge(len(old.tokens) * len(fresh.tokens))  # each word of one looked for in the other
        old, fresh = align_abbreviations(old, fresh)
    if not old.normalised or not fresh.normalised:
        return None
    if old.normalised == fresh.normalised:
        return Verdict(
            "duplicate", "same_text", 1.0, "The texts are the same once case, spacing and punctuation are normalised."
        )
    similar = math.isfinite(similarity) and similarity >= floor
    verdict = exclusive_predicate(old, fresh, similar, work)
    if verdict is not None:
        return verdict
    if not similar:
        return filled_slot(old, fresh, work)  # one slot of the same words: as strict as a predicate's
    return (
        _negation(old, fresh, work)
        or _numbers_differ(old, fresh, work)
        or replaced(old, fresh, work)
        or changed_value(old, fresh, work)
        or opposite_value(old, fresh, work)
        or swapped_name(old, fresh, work)
        or filled_slot(old, fresh, work)
        or moved_place(old, fresh)
        or taken_over(old, fresh)
        or _same_words(old, fresh)
        or _near_identical(old, fresh, similarity, near_identical, work)
        or _containment(old, fresh, work)
    )


def _countable(old: Text, new: Text, work: Work) -> bool:
    """Whether both texts hold few enough quantities for the rules that compare them pairwise."""
    if len(old.quantities) <= MAX_QUANTITIES and len(new.quantities) <= MAX_QUANTITIES:
        return True
    work.skip(f"a text holds more than {MAX_QUANTITIES} quantities: the rules comparing values were not tried")
    return False


def _negation(old: Text, new: Text, work: Work) -> Verdict | None:
    """One text negates, in one clause, a claim that the other affirms in one of its clauses, and the two are
    about the same thing (most of the shorter one's words are in the other): two chat turns that share a word
    or two ("not sure" / "make sure") contradict nothing."""
    if different_names(old, new) or _subject_overlap(old, new) < SAME_SUBJECT:
        return None
    for negating, affirming, who in ((new, old, "new"), (old, new, "existing")):
        affirmed = [clause for clause in affirming.clauses if clause.negation is None]
        where: defaultdict[str, list[int]] = defaultdict(list)  # content word → affirmative clauses holding it
        for index, clause in enumerate(affirmed):
            work.charge(1 + len(clause.content))
            for word in clause.content:
                where[word].append(index)
        for clause in negating.clauses:
            claim = clause.content - _WHEN_STEMS if says_no_longer([t.lower for t in clause.tokens]) else clause.content
            if clause.negation is None or not claim or (len(claim) == 1 and not _opens(clause) and not _ends(clause)):
                continue
            if _double_negative(clause):
                continue  # "won't dispense without a signed chart": a requirement, affirmed
            work.charge(1 + sum(len(where.get(word, ())) for word in claim))
            hits = Counter(index for word in claim for index in where.get(word, ()))
            best = max(hits, key=hits.__getitem__, default=None)
            if best is not None and hits[best] / len(claim) >= NEGATION_COVER:
                if says_no_longer([t.lower for t in clause.tokens]) and _departed(affirmed[best]):
                    continue  # "Margaret has left the club" / "Margaret isn't in the club anymore": both say it ended
                covered = hits[best] / len(claim)
                return Verdict(
                    "contradiction",
                    "negation",
                    round(0.75 + 0.2 * covered, 2),
                    f'The {who} memory negates ("{clause.negation}") what the other states: '
                    f'"{preview(affirmed[best].text, 80)}".',
                )
    return None


def _double_negative(clause: Clause) -> bool:
    """A negation and "without" in one clause ("won't dispense without a chart", "never leaves without a
    helmet"): a condition required, which says what the other text affirms, not its denial."""
    lowered = [t.lower for t in clause.tokens]
    return "without" in lowered and any(is_negation(w) and w != "without" for w in lowered)


_HAS = frozenset({"has", "had", "have", "just", "recently", "already", "since"})
_LEAVES = frozenset({"left", "resigned", "departed"})


def _departed(clause: Clause) -> bool:
    """The clause says someone left ("has left the club", "resigned from the board"): it states an end, as "no
    longer" does; not "on the left"."""
    tokens = clause.tokens
    for i, token in enumerate(tokens):
        if token.lower in _LEAVES and (token.lower != "left" or (i and tokens[i - 1].lower in _HAS)):
            return True
    return False


# when a state ended is not what ended: "mum quit smoking in the spring" denies "My mum smokes"
_WHEN_STEMS = frozenset(
    stem(w)
    for w in (
        "spring summer autumn fall winter january february march april june july august september october november "
        "december week weeks month months year years today yesterday ago recently lately earlier last"
    ).split()
)


def _subject_overlap(old: Text, new: Text) -> float:
    """The texts' word overlap; where one says a state ended, without the words of when it held or ended,
    which name no subject: "I take sertraline every morning" / "I came off sertraline in October"."""
    if any(_ends(clause) for text in (old, new) for clause in text.clauses):
        return overlap(old.words - _WHEN_STEMS, new.words - _WHEN_STEMS)
    return overlap(old.words, new.words)


def _ends(clause: Clause) -> bool:
    """The negation ends a state ("I'm not vegetarian anymore", "quit smoking"): a one-word claim counts."""
    return says_no_longer([t.lower for t in clause.tokens])


def _opens(clause: Clause) -> bool:
    """The negation is the clause's first word: a correction ("…on Tuesdays, not Fridays"). A one-word claim
    counts only then; "I'm not sure" or "I can't have gluten" deny nothing another text states."""
    return clause.tokens[0].text == clause.negation


def _numbers_differ(old: Text, new: Text, work: Work) -> Verdict | None:
    """A slot both texts fill holds different values on each side (and neither side also keeps the other's).
    Two quantities share a slot when they have the same dimension and either the same anchor word or that
    dimension occurs once on each side ("costs $20" / "is $25")."""
    if different_names(old, new) or not _countable(old, new, work):
        return None
    if overlap(old.gist, new.gist) < SAME_SUBJECT and not _one_measure_each(old, new):
        return None
    if _ALSO & ({t.lower for t in new.tokens} - {t.lower for t in old.tokens}):
        return None  # "Harbour Road runs the 42" / "… is also taking on the 43": one more, not another
    old_rivals, new_rivals = _rivals(old.quantities, new.quantities), _rivals(new.quantities, old.quantities)
    changed = {id(b) for b in new.quantities if _changed(b, new_rivals(b), work)}
    for a in old.quantities:
        rivals = old_rivals(a)
        work.charge(len(rivals))  # looking for a changed rival below
        if not _changed(a, rivals, work):
            continue
        b = next((b for b in rivals if id(b) in changed), None)
        if b is not None and (_anchored_elsewhere(a, b, new) or _anchored_elsewhere(b, a, old)):
            continue  # "The launch is on March 14" / "The beta opens on February 20, ahead of the launch"
        if b is not None and (_fragment(a, old) or _fragment(b, new)):
            continue  # "John: Thanks! Three times a week." answers a question the text does not hold
        if b is not None and _other_subjects(a, old, b, new):
            continue  # "Backups of the main database run at 2am" / "… of the analytics database run at 4am"
        if b is not None and (within_bound(a, old, b, new) or within_bound(b, new, a, old)):
            continue  # "The budget is under $10k" / "The budget is $8,500": a value inside the bound
        if b is not None:
            slot = a.anchor_text or b.anchor_text or a.kind
            return Verdict(
                "contradiction",
                f"numbers_differ:{a.kind}",
                0.9,
                f'{slot}: "{a.text}" in the existing memory, "{b.text}" in the new one.',
            )
    return None


_MEASURES = frozenset(
    {
        "duration",
        "size",
        "mass",
        "length",
        "degrees",
        "pressure",
        "percent",
        "money",
        "frequency",
        "clock",
        "date",
        "power",
        "volume",
    }
)


def _one_measure_each(old: Text, new: Text) -> bool:
    """Each text holds one quantity, a measure of the same dimension, and they share a word before it (the
    thing measured): "The team standup lasts 15 minutes" / "Standup runs for 30 minutes"."""
    if len(old.quantities) != 1 or len(new.quantities) != 1:
        return False
    a, b = old.quantities[0], new.quantities[0]
    if a.dimension != b.dimension or a.kind not in _MEASURES:
        return False
    return bool(_words_before(a, old) & _words_before(b, new)) and overlap(old.gist, new.gist) >= MEASURE_SUBJECT


def _words_before(q: Quantity, text: Text) -> set[str]:
    for clause in text.clauses:
        for i, token in enumerate(clause.tokens):
            if token.quantity is q:
                return {c for t in clause.tokens[:i] if t.quantity is None and (c := t.content) is not None}
    return set()


def _fragment(q: Quantity, text: Text) -> bool:
    """The value is a clause of its own and the only one of its kind in the text: a bare answer ("Three times
    a week.") to a question the text does not hold, not an item of a list ("limits: 10 requests, 20 …")."""
    clause = next((c for c in text.clauses if any(t.quantity is q for t in c.tokens)), None)
    alone = clause is not None and len(clause.tokens) == 1
    return alone and sum(1 for other in text.quantities if other.dimension == q.dimension) == 1


def _other_subjects(a: Quantity, old: Text, b: Quantity, new: Text) -> bool:
    """Each value is said of something the other text does not name: before it in its clause, a word the other
    text lacks that names a thing ("Priya's daughter is 7" / "Priya's son is 11", "the main database" / "the
    analytics database"). Two things, each with its own value; a verb changed ("promises" / "signed") is not."""
    if _naming_before(a, old, new) and _naming_before(b, new, old):
        return True
    if _naming_anywhere(a, old, new) and _naming_anywhere(b, new, old):
        return True  # "£28 a night for a large dog" / "… for a small dog", "turnaround for crowns" / "… for dentures"
    if _object_before(a, old, new) and _object_before(b, new, old):
        return True
    return _labels_apart(a, old, new) or _labels_apart(b, new, old)


def _labels_apart(q: Quantity, text: Text, other: Text) -> bool:
    """A bare number followed by a word ``other`` lacks: the label of something else ("a size 40 bike" against
    "Maya's shoe size is 38")."""
    found = _place(q, text)
    if q.kind != "number" or found is None:
        return False
    tokens, at = found
    after = tokens[at + 1] if at + 1 < len(tokens) else None
    return after is not None and after.content is not None and after.content not in other.words


def _object_before(q: Quantity, text: Text, other: Text) -> bool:
    """Right before ``q`` a word ``other`` lacks, after a word both texts have, determiners aside: the thing the
    value is said of ("I water the tomatoes twice a day" / "I water the roses once a week")."""
    found = _place(q, text)
    if found is None:
        return False
    tokens, at = found
    if at < 2 or tokens[at - 1].quantity is not None:
        return False
    thing = tokens[at - 1].content
    j = at - 2
    while j >= 0 and tokens[j].lower in _POSSESSIVES | {"the", "a", "an"}:
        j -= 1
    shared = tokens[j].content if j >= 0 and tokens[j].quantity is None else None
    return thing is not None and thing not in other.words and shared is not None and shared in other.words


def _place(q: Quantity, text: Text) -> tuple[Sequence[Token], int] | None:
    """The tokens of the clause holding ``q`` and ``q``'s place among them."""
    for clause in text.clauses:
        at = next((i for i, t in enumerate(clause.tokens) if t.quantity is q), None)
        if at is not None:
            return clause.tokens, at
    return None


_POSSESSIVES = frozenset({"my", "our", "his", "her", "their", "your", "its"})
_GETS = frozenset({"get", "gets", "got", "gotten", "getting"})


def _naming_before(q: Quantity, text: Text, other: Text) -> list[str]:
    """Words before ``q`` in its clause, missing from ``other``, that qualify a noun both texts have, right
    before it ("main" in "main database"; not "version" in "version on the build server"), or follow a
    possessive ("Priya's daughter", "my son")."""
    place = _place(q, text)
    if place is None:
        return []
    tokens, at = place
    found = []
    for i in range(at):
        word = tokens[i].content
        if tokens[i].quantity is not None or word is None or word in other.words or tokens[i].lower in _GETS:
            continue  # "gets" of "gets checked": the passive's auxiliary, naming nothing
        after = tokens[i + 1] if i + 1 < at and tokens[i + 1].content is not None else None
        before = tokens[i - 1].lower if i else ""
        if (after is not None and after.quantity is None and after.content in other.words) or (
            before.endswith("'s") or before in _POSSESSIVES
        ):
            found.append(word)
    return found


_OF = frozenset({"for", "of"})
_ALSO = frozenset({"also", "too", "additionally"})


def _naming_anywhere(q: Quantity, text: Text, other: Text) -> list[str]:
    """Words of ``q``'s clause missing from ``other`` that, after ``q``, qualify a noun both texts have, right after
    them ("large" in "£28 a night for a large dog"), or, anywhere, name what a noun both have is of or for
    ("crowns" in "turnaround for crowns") or what the value itself is for ("consultation" in "£48 for a
    consultation")."""
    place = _place(q, text)
    if place is None:
        return []
    tokens, at = place
    found = []
    for i, token in enumerate(tokens):
        word = token.content
        if i == at or token.quantity is not None or word is None or word in other.words or token.lower in _GETS:
            continue
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        qualifies = i > at and after is not None and after.quantity is None and after.content in other.words
        j = i - 1
        while j >= 0 and tokens[j].lower in _POSSESSIVES | {"the", "a", "an"}:
            j -= 1
        shared = tokens[j - 1] if j >= 1 and tokens[j].lower in _OF else None
        of_shared = shared is not None and shared.quantity is None and shared.content in other.words
        # "£48 for a consultation" / "£15 for a nail clip", "£45 to take in a jacket" / "£20 to shorten trousers"
        for_value = j - 1 == at and tokens[j].lower in ("for", "to")
        if qualifies or of_shared or for_value:
            found.append(word)
    return found


def _anchored_elsewhere(a: Quantity, b: Quantity, text: Text) -> bool:
    """``a``'s anchor word is in ``text`` but not in the clause holding ``b``, which is anchored elsewhere: the
    two values belong to two things the text tells apart."""
    if a.anchor == b.anchor:
        return False
    holding = next((c for c in text.clauses if any(t.quantity is b for t in c.tokens)), None)
    return holding is not None and a.anchor in text.words and a.anchor not in holding.content


def _rivals(mine: list[Quantity], theirs: list[Quantity]) -> Callable[[Quantity], list[Quantity]]:
    """For a quantity of ``mine``, the quantities of ``theirs`` in the same slot."""
    by_slot: defaultdict[tuple[str, str], list[Quantity]] = defaultdict(list)
    by_dimension: defaultdict[str, list[Quantity]] = defaultdict(list)
    for q in theirs:
        by_slot[(q.dimension, q.anchor)].append(q)
        by_dimension[q.dimension].append(q)
    mine_count = Counter(q.dimension for q in mine)

    def rivals(q: Quantity) -> list[Quantity]:
        same_dimension = by_dimension.get(q.dimension, [])
        if mine_count[q.dimension] == 1 and len(same_dimension) == 1:
            return same_dimension
        return by_slot.get((q.dimension, q.anchor), [])

    return rivals


def _changed(q: Quantity, rivals: list[Quantity], work: Work) -> bool:
    work.charge(1 + len(rivals))
    return bool(rivals) and not any(same_value(q, r) for r in rivals)


def _covered(xs: list[Quantity], ys: list[Quantity], work: Work) -> bool:
    """Every value of ``xs`` is among ``ys``."""
    work.charge(len(xs) * (1 + len(ys)))
    return all(any(same_value(x, y) for y in ys) for x in xs)


def _same_quantities(old: Text, new: Text, work: Work) -> bool:
    return _covered(old.quantities, new.quantities, work) and _covered(new.quantities, old.quantities, work)


def _same_words(old: Text, new: Text) -> Verdict | None:
    if old.content and old.content == new.content and old.negated == new.negated:
        return Verdict("duplicate", "same_words", 0.9, "Same content words and values, worded or ordered differently.")
    return None


def _near_identical(old: Text, new: Text, similarity: float, threshold: float, work: Work) -> Verdict | None:
    if similarity < threshold or old.negated != new.negated or not _countable(old, new, work):
        return None
    if _same_quantities(old, new, work):
        return Verdict(
            "duplicate",
            "near_identical",
            round(min(similarity, 1.0), 3),
            f"Similarity {similarity:.2f} with the same values and polarity.",
        )
    return None


def _dropped_name(old: Text, new: Text) -> bool:
    """A name of the existing text (a capitalised word but its first; after a colon too: "… this sprint: Hannah")
    that the new one does not have: the new text does not keep the claim, whatever it adds."""
    return any(
        t.quantity is None and t.text[:1].isupper() and t.content is not None and t.content not in new.content
        for t in old.tokens[1:]
    )


def _containment(old: Text, new: Text, work: Work) -> Verdict | None:
    """The new text keeps most of the existing one's content words and all its values, and adds some."""
    if not old.content or old.negated != new.negated or different_names(old, new):
        return None
    kept, added = old.content & new.content, new.content - old.content
    share = len(kept) / len(old.content)
    if share < CONTAINMENT or not added or len(new.normalised) <= len(old.normalised):
        return None
    if _dropped_name(old, new):
        return None  # "Babysitting the builds this sprint: Hannah" / "marcus is babysitting the builds this sprint"
    if not _countable(old, new, work) or not _covered(old.quantities, new.quantities, work):
        return None
    detail = list(dict.fromkeys(t.text for t in new.tokens if t.content in added))
    return Verdict(
        "refinement",
        "containment",
        round(share, 2),
        f"The new memory keeps {len(kept)} of the existing one's {len(old.content)} content words and "
        f'adds "{preview(" ".join(detail), 80)}".',
    )

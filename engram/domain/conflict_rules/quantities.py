"""Quantities in a text: numbers, dates, times of day, versions, amounts of money and measures, each read as
a comparable value of a dimension (seconds, bytes, (year, month, day), …)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from engram.domain.conflict_rules.words import is_content, stem

_Key = tuple[float | None, ...]


@dataclass(frozen=True)
class Quantity:
    dimension: str  # "duration", "size", "date", "clock", "percent", "money:usd/month", "count:servic", "number", …
    key: _Key  # comparable value: seconds, bytes, (year, month, day) with None as "any", version parts
    text: str  # as written
    anchor: str = ""  # stem of the nearest content word of its clause: with the dimension, the slot it fills
    anchor_text: str = ""  # that word as written
    approximate: bool = False  # hedged as written: "about 200", "around 4.9 hectares", "~30 ms"

    @property
    def kind(self) -> str:
        return self.dimension.split("/")[0].split(":")[0]

    @property
    def token(self) -> str:
        return f"{self.dimension}={self.key}"


RATED_KINDS = frozenset({"money", "mass", "length", "size", "count"})  # kinds a period word makes a rate


def period_of(word: str) -> str | None:
    """The period a word such as "daily", "monthly" or "annual" names ("day", "month", "year"), else None."""
    return _ADVERB_PERIODS.get(word.lower())


def per(q: Quantity, period: str) -> Quantity:
    """``q`` as a rate per ``period`` ("$8k" of "our monthly bill" is $8k a month)."""
    return Quantity(f"{q.dimension}/{period}", q.key, q.text, q.anchor, q.anchor_text, q.approximate)


APPROXIMATE = 0.1  # a hedged value reaches at most 10% either side ("around 200" / "212 member families")


def same_value(a: Quantity, b: Quantity) -> bool:
    if a.dimension != b.dimension or len(a.key) != len(b.key):
        return False
    if a.dimension == "clock" and (twelve_hour(a) or twelve_hour(b)):
        x, y = a.key[0], b.key[0]  # "6:50" / "18:50", "half past five" / "17:30": the same hour of either half
        return x is None or y is None or math.isclose(x % 720, y % 720)
    if len(a.key) == 1 and a.kind not in ("date", "clock", "number") and a.key[0] is not None and b.key[0] is not None:
        converted = a.kind in _CONVERTIBLE and not math.isclose(_factor(a), _factor(b), rel_tol=1e-6)
        reach = max(_reach(q, converted) for q in (a, b))
        if reach:
            return abs(a.key[0] - b.key[0]) <= reach * (1 + 1e-9)
    return all(x is None or y is None or math.isclose(x, y, rel_tol=1e-9) for x, y in zip(a.key, b.key, strict=True))


_CONVERTIBLE = frozenset({"length", "mass", "area"})  # kinds written in metric or imperial units
_WRITTEN = re.compile(r"\d[\d,]*(?:\.(?P<decimals>\d+))?")


def _written(q: Quantity) -> re.Match[str] | None:
    return _WRITTEN.search(q.text)


def _factor(q: Quantity) -> float:
    """The unit's size in the dimension's base unit (1000 for "5 km"), 1 when no number is written in digits."""
    written = _written(q)
    number = float(written[0].replace(",", "")) if written else 0.0
    return (q.key[0] or 0.0) / number if number else 1.0


def _reach(q: Quantity, converted: bool) -> float:
    """How far from ``q``'s value another is still the same value, in the dimension's base unit: converted from
    another unit, the rounding of its last written digit ("12 acres" / "4.9 hectares"); hedged, also a quarter of a
    round number's step, at most a tenth of it ("around 200" is 175 to 225, "about 70 kg" 67.5 to 72.5 kg)."""
    if not (converted or q.approximate):
        return 0.0
    value = q.key[0] or 0.0
    written = _written(q)
    number = float(written[0].replace(",", "")) if written else value
    if not number:
        return 0.0
    step = 10.0 ** -len(written["decimals"]) if written and written["decimals"] else 1.0
    reach = step / 2
    if q.approximate and step == 1.0:
        digits = str(int(number))
        reach = max(reach, min(10.0 ** (len(digits) - len(digits.rstrip("0"))) / 4, APPROXIMATE * abs(number)))
    return reach * abs(value / number)


def _unit_table(*rows: tuple[str, str, float]) -> dict[str, tuple[str, float]]:
    """Unit word → (dimension, factor to the dimension's base unit: seconds, bytes, grams, metres, …)."""
    return {name: (dimension, factor) for names, dimension, factor in rows for name in names.split()}


_UNITS = _unit_table(
    ("ms msec msecs millisecond milliseconds", "duration", 0.001),
    ("s sec secs second seconds", "duration", 1.0),
    ("m min mins minute minutes", "duration", 60.0),
    ("h hr hrs hour hours", "duration", 3600.0),
    ("d day days", "duration", 86_400.0),
    ("wk wks week weeks", "duration", 604_800.0),
    ("month months", "duration", 2_592_000.0),
    ("y yr yrs year years", "duration", 31_536_000.0),
    ("b byte bytes", "size", 1.0),
    ("kb", "size", 1e3),
    ("mb", "size", 1e6),
    ("gb", "size", 1e9),
    ("tb", "size", 1e12),
    ("kib", "size", 2.0**10),
    ("mib", "size", 2.0**20),
    ("gib", "size", 2.0**30),
    ("tib", "size", 2.0**40),
    ("% percent pct", "percent", 1.0),
    ("usd dollar dollars bucks", "money:usd", 1.0),
    ("eur euro euros", "money:eur", 1.0),
    ("gbp pound pounds", "money:gbp", 1.0),
    ("mg", "mass", 0.001),
    ("g gram grams", "mass", 1.0),
    ("kg kgs kilo kilos kilogram kilograms", "mass", 1000.0),
    ("lb lbs", "mass", 453.592),
    ("mm", "length", 0.001),
    ("cm", "length", 0.01),
    ("meter meters metre metres", "length", 1.0),
    ("km kilometer kilometers kilometre kilometres", "length", 1000.0),
    ("mi mile miles", "length", 1609.344),
    ("ha hectare hectares", "area", 10_000.0),
    ("acre acres", "area", 4046.856),
    ("degree degrees ° °c celsius", "degrees", 1.0),  # a bare "degrees" is read as Celsius
    ("°f fahrenheit", "degrees:f", 1.0),
    ("pa pascal pascals", "pressure", 1.0),
    ("kpa", "pressure", 1e3),
    ("mbar millibar millibars", "pressure", 100.0),
    ("bar bars", "pressure", 1e5),
    ("psi", "pressure", 6894.757),
    ("w watt watts", "power", 1.0),
    ("kw kilowatt kilowatts", "power", 1e3),
    ("mw megawatt megawatts", "power", 1e6),
    ("hp bhp horsepower", "power", 745.7),
    ("ml millilitre millilitres milliliter milliliters", "volume", 0.001),
    ("l litre litres liter liters", "volume", 1.0),
    ("hl hectolitre hectolitres", "volume", 100.0),
)
# a counted noun per minute written as one abbreviation: "64 bpm" is "64 beats per minute"
_UNITS.update(
    {
        short: (f"count:{stem(noun)}/minute", 1.0)
        for short, noun in (("bpm", "beats"), ("rpm", "revolutions"), ("wpm", "words"))
    }
)
_PERIODS = {
    1.0: "second",
    60.0: "minute",
    3600.0: "hour",
    86_400.0: "day",
    604_800.0: "week",
    2_592_000.0: "month",
    31_536_000.0: "year",
}
_CURRENCIES = {"$": "usd", "€": "eur", "£": "gbp"}
_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "million": 1e6, "mn": 1e6, "bn": 1e9, "billion": 1e9}
_MONEY_MULTIPLIERS = {"m": 1e6, "b": 1e9}
_NUMBER_WORDS = {
    word: float(n)
    for n, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER_WORDS.update(
    {"thirty": 30.0, "forty": 40.0, "fifty": 50.0, "sixty": 60.0, "seventy": 70.0, "eighty": 80.0, "ninety": 90.0}
)
_NUMBER_WORDS["hundred"] = 100.0
_SCALES = {"hundred": 100.0, "thousand": 1e3}
# a number written in two or more words: "one hundred", "twenty-five", "two thousand five hundred", "a hundred"
_SPELLED = r"(?:" + "|".join(sorted(set(_NUMBER_WORDS) | set(_SCALES), key=len, reverse=True)) + r")"
_COMPOUND_NUMBER = re.compile(rf"\b(?P<words>(?:a|{_SPELLED})(?:(?:\s*-\s*|\s+(?:and\s+)?){_SPELLED})+)\b(?!-)", re.I)
# counted nouns that all count people: "120 employees" and "200 people" fill one slot
_PEOPLE = frozenset({"people", "persons", "employees", "staff", "staffers", "workers", "folks", "headcount"})
_MONTHS = {
    name: n
    for n, names in enumerate(
        (
            "jan january",
            "feb february",
            "mar march",
            "apr april",
            "may",
            "jun june",
            "jul july",
            "aug august",
            "sep sept september",
            "oct october",
            "nov november",
            "dec december",
        ),
        start=1,
    )
    for name in names.split()
}
_NOT_NOUNS = frozenset({"last", "next", "ago", "old", "new", "times"}) | frozenset(_MONTHS)

_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_NUM = r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_ISO_DATE = re.compile(r"(?<![\w.])(?P<year>\d{4})[-/](?P<mon>\d{1,2})[-/](?P<day>\d{1,2})(?![\w-])")
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<year>\d{{4}})\b)?", re.I)
_DAY_MONTH = re.compile(
    rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\b(?:,?\s+(?P<year>\d{{4}})\b)?", re.I
)
_MONTH_YEAR = re.compile(rf"\b{_MONTH}\s+(?P<year>\d{{4}})\b", re.I)
_CLOCK = re.compile(r"(?<![\w.:])(?P<hour>\d{1,2})(?::(?P<minute>[0-5]\d))?\s*(?P<half>[ap]\.?m\.?)?(?![\w:])", re.I)
_VERSION = re.compile(r"(?<![\w.])(?:v(?P<short>\d+(?:\.\d+)?)|v?(?P<long>\d+(?:\.\d+){2,}))(?![\w]|\.\d)", re.I)
_MONEY = re.compile(rf"(?<![\w.])(?P<cur>[$€£])\s?{_NUM}(?P<suffix>[^\W\d_]*)")
_WORD_NUMBER = re.compile(r"\b(?P<word>" + "|".join(_NUMBER_WORDS) + r")(?:\s*-\s*|\s+)(?P<unit>[^\W\d_]+)", re.I)
_NUMBER = re.compile(rf"(?<![\w.$€£:/#])(?<!\w-){_NUM}(?P<suffix>[^\W\d_]+|%|°[cf]?)?", re.I)
_NEXT_WORD = re.compile(r"[ \t]*(?:-[ \t]*)?(%|°[cf]?|[^\W\d_]+)", re.I)
_RATE = re.compile(r"[ \t]*(?:/|per[ \t]+|an?[ \t]+|every[ \t]+|each[ \t]+)[ \t]*([^\W\d_]+)", re.I)
# a period written as an adverb after a measure ("20 mg daily", "$5k monthly"): the unit of its rate
_RATE_ADVERB = re.compile(r"[ \t]*(hourly|daily|nightly|weekly|monthly|yearly|annually)\b", re.I)
_ADVERB_PERIODS = {
    "annual": "year",
    "hourly": "hour",
    "daily": "day",
    "nightly": "day",
    "weekly": "week",
    "monthly": "month",
    "yearly": "year",
    "annually": "year",
}
# how often something happens, as times per day: "daily", "twice a week", "every other month", "fortnightly",
# "every Sunday", "three times daily"; the key is (times per day, which day or part of it when the text says so)
_PER_DAY = {
    "hour": 24.0,
    "day": 1.0,
    "night": 1.0,
    "morning": 1.0,
    "evening": 1.0,
    "weekday": 5 / 7,
    "week": 1 / 7,
    "weekend": 1 / 7,
    "fortnight": 1 / 14,
    "month": 12 / 365,
    "quarter": 4 / 365,
    "year": 1 / 365,
} | dict.fromkeys("monday tuesday wednesday thursday friday saturday sunday".split(), 1 / 7)
_ADVERB_FREQUENCIES = {
    "hourly": 24.0,
    "daily": 1.0,
    "nightly": 1.0,
    "weekly": 1 / 7,
    "fortnightly": 1 / 14,
    "biweekly": 1 / 14,
    "monthly": 12 / 365,
    "quarterly": 4 / 365,
    "yearly": 1 / 365,
    "annually": 1 / 365,
}
# periods that also say when ("every Sunday", "every morning"): their place here is part of the value
_WHEN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "morning", "evening", "night")
_MEASURED = re.compile(r"\d\s*(?:[^\W\d_]+)?\s*$")  # ends with a number, or a number and its unit
_TIMES = {"once": 1.0, "twice": 2.0, "thrice": 3.0}
_PERIOD_WORD = r"(?P<period>" + "|".join(sorted(_PER_DAY, key=len, reverse=True)) + r")s?"
_FREQUENCY = re.compile(
    r"\b(?:(?P<times>once|twice|thrice|(?P<n>\d+|"
    + "|".join(_NUMBER_WORDS)
    + r")\s+times)\s+(?:a|an|per|every|each)\s+"
    + _PERIOD_WORD
    + r"|(?P<times2>once|twice|thrice|(?P<n2>\d+|"
    + "|".join(_NUMBER_WORDS)
    + r")\s+times)\s+(?P<adverb2>"
    + "|".join(_ADVERB_FREQUENCIES)
    + r")|(?:every|each)\s+(?:(?P<other>other)\s+|(?P<every>\d+|"
    + "|".join(_NUMBER_WORDS)
    + r")\s+)?"
    + _PERIOD_WORD.replace("period", "every_period")
    + r"|(?P<adverb>"
    + "|".join(_ADVERB_FREQUENCIES)
    + r"))\b",
    re.I,
)

_Span = tuple[int, int, Quantity]


def find_quantities(text: str) -> list[_Span]:
    """Every number, date, time, version, amount or measure in ``text``, as non-overlapping spans; the more
    specific reading of a stretch of text wins ("2026-03-01" is a date, not three numbers)."""
    claimed: list[_Span] = []
    taken = bytearray(len(text))
    for finder in (
        _iso_dates,
        _numeric_months,
        _month_dates,
        _clock_times,
        _spelled_clock_times,
        _noons,
        _versions,
        _frequencies,
        _money,
        _compound_numbers,
        _word_numbers,
        _numbers,
        _bare_word_numbers,
    ):
        for start, end, quantity in finder(text):
            if not any(taken[start:end]):
                if _HEDGE_BEFORE.search(text, 0, start) or _HEDGE_AFTER.match(text, end):
                    quantity = replace(quantity, approximate=True)
                claimed.append((start, end, quantity))
                taken[start:end] = b"\x01" * (end - start)
    return sorted(claimed, key=lambda span: span[0])


_HEDGE_BEFORE = re.compile(
    r"(?:\b(?:about|around|roughly|approximately|approx\.?|circa|nearly|almost|close\s+to)\s+|~\s*)$", re.I
)
_HEDGE_AFTER = re.compile(r"\s*(?:-ish\b|\s+or\s+so\b)", re.I)


def _date(text: str, start: int, end: int, year: str | None, month: int, day: str | None) -> Iterator[_Span]:
    if 1 <= month <= 12 and (day is None or 1 <= int(day) <= 31):
        key = (float(year) if year else None, float(month), float(day) if day else None)
        yield start, end, Quantity("date", key, text[start:end])


def _iso_dates(text: str) -> Iterator[_Span]:
    for m in _ISO_DATE.finditer(text):
        yield from _date(text, m.start(), m.end(), m["year"], int(m["mon"]), m["day"])


_NUMERIC_MONTH = re.compile(r"(?<![\w./-])(?P<mon>0?[1-9]|1[0-2])/(?P<year>(?:19|20)\d\d)(?![\w/-])")


def _numeric_months(text: str) -> Iterator[_Span]:
    """A month written as digits with its year: "09/2027", "3/2026"."""
    for m in _NUMERIC_MONTH.finditer(text):
        yield from _date(text, m.start(), m.end(), m["year"], int(m["mon"]), None)


def _month_dates(text: str) -> Iterator[_Span]:
    for pattern in (_MONTH_DAY, _DAY_MONTH, _MONTH_YEAR):
        for m in pattern.finditer(text):
            if m["month"] == "may":
                continue  # "these 2 may differ": the verb, not the month
            day = m.groupdict().get("day")
            yield from _date(text, m.start(), m.end(), m["year"], _MONTHS[m["month"].lower()], day)


def _clock_times(text: str) -> Iterator[_Span]:
    for m in _CLOCK.finditer(text):
        if m["minute"] is None and m["half"] is None:
            continue  # a bare number, not a time of day
        hour, minute = int(m["hour"]), int(m["minute"] or 0)
        if m["half"]:
            if not 1 <= hour <= 12:
                continue
            hour = hour % 12 + (12 if m["half"].lower().startswith("p") else 0)
        if hour <= 23:
            yield m.start(), m.end(), Quantity("clock", (float(hour * 60 + minute),), m[0])


_HOUR_WORDS = {w: i for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)}
_HOUR = r"(?P<hour>" + "|".join(sorted(_HOUR_WORDS, key=len, reverse=True)) + r"|1[0-2]|0?[1-9])"
_MINUTES = {"quarter": 15, "half": 30, "five": 5, "ten": 10, "twenty": 20, "twenty-five": 25, "twenty five": 25}
# a time of day in words: "half past five", "ten to seven", "quarter after 4", "seven o'clock", and an hour word
# after "at" that ends its clause ("counted at six"); its half of the day is unsaid unless "am" / "pm" follows
_SPELLED_CLOCK = re.compile(
    r"\b(?:(?P<minutes>twenty[- ]five|quarter|half|twenty|ten|five|[1-5]?\d)(?:\s+minutes)?\s+(?P<way>past|after|to)"
    r"\s+"
    + _HOUR
    + r"|"
    + _HOUR.replace("hour", "oclock")
    + r"\s+o'?clock|(?<=\bat\s)(?P<at>"
    + "|".join(sorted(_HOUR_WORDS, key=len, reverse=True))
    + r")(?=\s*(?:[.,;!?]|$)))(?:\s*(?P<half>[ap]\.?m\b\.?))?(?![\w-])",
    re.I,
)


def _hour(word: str) -> int:
    return _HOUR_WORDS.get(word.lower()) or int(word)


def _spelled_clock_times(text: str) -> Iterator[_Span]:
    for m in _SPELLED_CLOCK.finditer(text):
        if m["hour"]:
            hour, minute = _hour(m["hour"]), _MINUTES.get(m["minutes"].lower().replace("-", " "), None)
            if minute is None:
                minute = _MINUTES.get(m["minutes"].lower()) or int(m["minutes"])
            if not 0 < minute < 60:
                continue
            if m["way"].lower() == "to":
                hour, minute = hour - 1, 60 - minute
        else:
            hour, minute = _hour(m["oclock"] or m["at"]), 0
        hour %= 12
        if m["half"] and m["half"].lower().startswith("p"):
            hour += 12
        yield m.start(), m.end(), Quantity("clock", (float(hour * 60 + minute),), m[0])


def twelve_hour(q: Quantity) -> bool:
    """A time of day that does not say its half of the day: "6:50", "half past five", "at six" (not "6:50 pm",
    "18:50")."""
    key = q.key[0]
    return q.dimension == "clock" and key is not None and key < 13 * 60 and not _HALF_SAID.search(q.text)


_HALF_SAID = re.compile(r"\d\s*[ap]\.?m\b|\b[ap]\.?m\b|noon|midday|midnight", re.I)


_NOON = re.compile(r"\b(?P<word>noon|midday|midnight)\b", re.I)


def _noons(text: str) -> Iterator[_Span]:
    for m in _NOON.finditer(text):
        yield m.start(), m.end(), Quantity("clock", (0.0 if m["word"].lower() == "midnight" else 720.0,), m[0])


def _versions(text: str) -> Iterator[_Span]:
    for m in _VERSION.finditer(text):
        parts = (m["short"] or m["long"]).split(".")
        yield m.start(), m.end(), Quantity("number", tuple(float(p) for p in parts), m[0])


def _money(text: str) -> Iterator[_Span]:
    for m in _MONEY.finditer(text):
        dimension = f"money:{_CURRENCIES[m['cur']]}"
        found = _measure(text, m.start(), m.end("num"), m["num"], m["suffix"], money=dimension)
        if found:
            yield found


def _spelled_value(words: str) -> float | None:
    """The value of a number written in words ("one hundred and fifty", "twenty-five", "a thousand"), or None
    when the words do not make one number ("five six", "hundred")."""
    total, current, last = 0.0, 0.0, ""
    for word in re.split(r"[\s-]+", words.lower()):
        if word == "and":
            continue
        if word in _SCALES:
            if last in ("", "and") or (last in _SCALES and _SCALES[last] >= _SCALES[word]):
                return None
            current = max(current, 1.0) * _SCALES[word]
            if word == "thousand":
                total, current = total + current, 0.0
        elif word == "a":
            current = 1.0
        else:
            value = _NUMBER_WORDS[word]
            tens = _NUMBER_WORDS.get(last, 0.0)
            if last and last not in _SCALES and last != "a" and not (tens >= 20 and tens % 10 == 0 and 0 < value < 10):
                return None  # "five six", "twenty thirty"; "twenty-five" passes
            current += value
        last = word
    return total + current if last and last != "a" else None


def _compound_numbers(text: str) -> Iterator[_Span]:
    """Numbers written in two or more words, followed by a unit or a counted noun: "one hundred requests per
    minute", "twenty-five minutes"."""
    for m in _COMPOUND_NUMBER.finditer(text):
        value = _spelled_value(m["words"])
        if value is None or value != int(value):
            continue
        found = _measure(text, m.start(), m.end("words"), str(int(value)), "")
        if found and found[2].kind != "number":
            yield found


def _word_numbers(text: str) -> Iterator[_Span]:
    """A number written in one word before a unit or a counted noun ("nine engineers"); not "one" nor "zero",
    which are as often pronouns or idioms ("one thing", "zero chance") as counts."""
    for m in _WORD_NUMBER.finditer(text):
        unit = m["unit"].lower()
        if unit in _UNITS or (m["word"].lower() not in ("one", "zero") and _is_counted(unit)):
            found = _measure(text, m.start(), m.end("word"), str(int(_NUMBER_WORDS[m["word"].lower()])), "")
            if found:
                yield found


# a number in one word that ends what a verb or "to" says, with no noun after it: "came down to fourteen after
# a good summer", "the handicap is eighteen"; not "one" (a pronoun as often) nor "zero"
_BARE_WORD_NUMBER = re.compile(
    r"\b(?:is|are|was|were|be|been|now|to|reached|hit|became|becomes)\s+(?P<word>"
    + "|".join(w for w in _NUMBER_WORDS if w not in ("one", "zero", "hundred"))
    + r")\b(?!\s*-)(?:\s+(?P<next>[^\W\d_]+))?",
    re.I,
)


def _bare_word_numbers(text: str) -> Iterator[_Span]:
    for m in _BARE_WORD_NUMBER.finditer(text):
        if m["next"] and (is_content(m["next"].lower()) or m["next"].lower() in ("of", "o'clock", "oclock")):
            continue  # "two of them", "is three weeks", "to seven o'clock": not a bare number
        value = _NUMBER_WORDS[m["word"].lower()]
        yield m.start("word"), m.end("word"), Quantity("number", (value,), m["word"])


def _numbers(text: str) -> Iterator[_Span]:
    for m in _NUMBER.finditer(text):
        if text[m.end() : m.end() + 1].isalnum() or text[m.end() : m.end() + 1] == "_":
            continue  # part of an identifier such as 2x3
        suffix, end = m["suffix"] or "", m.end("num")
        if suffix.lower() in ("st", "nd", "rd", "th"):
            suffix, end = "", m.end()  # an ordinal: "the 3rd floor"
        found = _measure(text, m.start(), end, m["num"], suffix)
        if found and found[2].kind == "count" and _LABELLED.search(text, 0, m.start()):
            # "a size 40 shoe", "gate 12 departures": the number is the label's value, the noun not counted
            found = m.start(), end, Quantity("number", (float(m["num"].replace(",", "")),), text[m.start() : end])
        if found:
            yield found


# words that name the number after them: what follows it is the thing labelled, not a count
_LABELLED = re.compile(r"\b(?:size|version|number|level|gate|platform|room)\s*$", re.I)


def _count(word: str | None) -> float:
    if word is None:
        return 1.0
    return _TIMES.get(word.lower()) or _NUMBER_WORDS.get(word.lower()) or float(word)


def _frequencies(text: str) -> Iterator[_Span]:
    """How often: "twice a week", "three times daily", "every other month", "each quarter", "every Sunday",
    "fortnightly"."""
    for m in _FREQUENCY.finditer(text):
        if (m["every_period"] or m["adverb"]) and _MEASURED.search(text, 0, m.start()):
            continue  # the rate of the measure before it: "5 km every day", "$5k monthly"
        named = (m["period"] or m["every_period"] or "").lower()
        when = float(_WHEN.index(named)) if named in _WHEN else None
        if m["period"]:
            per_day = _count(m["n"] or m["times"]) * _PER_DAY[m["period"].lower()]
        elif m["adverb2"]:
            per_day = _count(m["n2"] or m["times2"]) * _ADVERB_FREQUENCIES[m["adverb2"].lower()]
        elif m["every_period"]:
            per_day = _PER_DAY[m["every_period"].lower()] / (2.0 if m["other"] else _count(m["every"]))
        else:
            following, _ = _next_word(text, m.end())
            if following and is_content(following.lower()):
                continue  # an adjective: "the monthly bill", "our weekly sync"
            per_day = _ADVERB_FREQUENCIES[m["adverb"].lower()]
        yield m.start(), m.end(), Quantity("frequency", (round(per_day, 6), when), m[0])


def _measure(text: str, start: int, end: int, number: str, suffix: str, money: str = "") -> _Span | None:
    """Read what follows ``number`` (which ends at ``end``): a multiplier (k, million), a unit (seconds, GB, %) or
    a counted noun ("3 services"), then a rate ("per month"). ``suffix`` is glued to the number ("30s", "10k")."""
    raw_number = number.replace(",", "")
    value = float(raw_number)
    attached = bool(suffix)
    word, after = (suffix, end + len(suffix)) if suffix else _next_word(text, end)
    factor = 1.0
    multiplier = _multiplier(word, money=bool(money))
    if multiplier:
        factor, end = multiplier, after
        word, after = _next_word(text, end)
        attached = False
    if word.lower() == "per" and _next_word(text, after)[0].lower() == "cent":
        word, after = "%", _next_word(text, after)[1]  # "45 per cent"
    if money:
        dimension = money
    elif word.lower() in _UNITS:
        dimension, unit = _UNITS[word.lower()]
        factor, end = factor * unit, after
        if dimension.startswith("money:") and factor == 1.0 and value == int(value):
            minor = _MINOR.match(text, end)  # "three pound fifty", "5 dollars 20", not "5 pounds 10 kids"
            following = _next_word(text, minor.end())[0].lower() if minor else ""
            if minor and not (following and is_content(following)):
                cents = float(minor["n"]) if minor["n"].isdigit() else _spelled_value(minor["n"])
                if cents is not None and 0 < cents < 100:
                    value, end = value + cents / 100, minor.end()
    elif attached:
        return None  # an identifier such as 2FA or 4xx
    elif "." not in raw_number and _is_counted(word):
        counted = "people" if word.lower() in _PEOPLE else stem(word.lower())
        dimension, end = f"count:{counted}", after
    elif factor == 1.0 and raw_number.isdigit() and number == raw_number and 1900 <= value <= 2199:
        return start, end, Quantity("date", (value, None, None), text[start:end])
    else:
        parts = raw_number.split(".") if factor == 1.0 else [str(value * factor)]
        return start, end, Quantity("number", tuple(float(p) for p in parts), text[start:end])
    rate, adverb = _RATE.match(text, end), _RATE_ADVERB.match(text, end)
    if rate and _UNITS.get(rate[1].lower(), ("", 0.0))[0] == "duration":
        dimension += "/" + _PERIODS.get(_UNITS[rate[1].lower()][1], rate[1].lower())
        end = rate.end()
    elif adverb:
        dimension += "/" + _ADVERB_PERIODS[adverb[1].lower()]
        end = adverb.end()
    return start, end, Quantity(dimension, (value * factor,), text[start:end])


_MINOR = re.compile(
    r"[ \t]+(?:and[ \t]+)?(?P<n>\d{1,2}|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
    r"(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    r"sixteen|seventeen|eighteen|nineteen|five|six|seven|eight|nine)\b(?:[ \t]+(?:p|pence|cents?)\b)?(?![ \t]*[\d%])",
    re.I,
)


def _next_word(text: str, pos: int) -> tuple[str, int]:
    match = _NEXT_WORD.match(text, pos)
    return (match[1], match.end()) if match else ("", pos)


def _multiplier(word: str, *, money: bool) -> float:
    if word == "M" or word.lower() in ("million", "mn"):
        return 1e6
    if money and word.lower() in _MONEY_MULTIPLIERS:
        return _MONEY_MULTIPLIERS[word.lower()]
    return _MULTIPLIERS.get(word.lower(), 0.0)


def _is_counted(word: str) -> bool:
    lower = word.lower()
    return len(lower) > 1 and lower.isalpha() and is_content(lower) and lower not in _NOT_NOUNS

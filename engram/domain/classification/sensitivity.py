"""How sensitive content is: ``secret`` when the secret guard (``engram.domain.secrets``) finds a credential;
``personal`` for an e-mail address, a phone number, a street or home address, health, salary, a date of birth
or a national id number; otherwise ``normal``. Secret and personal content suggest visibility ``private``; a
suggestion can only narrow the visibility a caller asked for (``narrow_visibility``)."""

from __future__ import annotations

from engram.domain.classification.cues import Cue, cue
from engram.domain.secrets import find_secrets
from engram.domain.values import Sensitivity

_EMAIL = r"(?<![\w.+-])[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w:])"
_PHONE = "|".join(
    (
        r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{2,4}\)?){2,4}(?![\w-])",  # +44 20 7946 0958
        r"(?<![\w-])\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?![\w-])",  # (415) 555-2671
        r"\b(?:phone|tel|mobile|cell)(?:\s+(?:number|no\.?))?\s*[:#]?\s*\+?\d[\d ().-]{6,}\d",  # phone: 0171 4960
    )
)
_STREET = (
    r"(?-i:\b\d{1,5}\s+(?:[A-Z][a-z]+\s+){1,4}"  # 221 Baker Street: case matters here
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Close)\b)"
)
_HEALTH = (
    r"\b(?:diagnos(?:ed|is|es)|allerg(?:y|ies|ic)|medications?|prescri(?:bed|ption)|illness|disease|"
    r"pregnan(?:t|cy)|therapy|therapist|anxiety|depression|diabet(?:es|ic)|cancer|surgery|chemotherapy|"
    r"disabilit(?:y|ies)|adhd|asthma|migraines?|mental\s+health|blood\s+pressure|sick\s+leave|"
    r"medical\s+(?:leave|condition|history|records?))\b"
)
_SALARY = (
    r"\b(?:salary|salaries|paycheck|payslip|pay\s+slip|pay\s+(?:rise|raise)|wages?|compensation\s+package|"
    r"annual\s+compensation|hourly\s+rate)\b|\bearns\s+[$€£]?\d"
)
_NATIONAL_ID = (
    r"\b(?:social\s+security\s+number|SSN|passport\s+number|national\s+id)\b"
    r"|(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w-])"
)  # 078-05-1120
PERSONAL_CUES: tuple[Cue, ...] = (
    cue("e-mail address", pattern=_EMAIL),
    cue("phone number", pattern=_PHONE),
    cue("street address", pattern=_STREET),
    cue("home address", pattern=r"\b(?:home\s+address|my\s+address|lives\s+at)\b"),
    cue("health", pattern=_HEALTH),
    cue("salary", pattern=_SALARY),
    cue("date of birth", pattern=r"\b(?:date\s+of\s+birth|DOB|born\s+on)\b"),
    cue("national id", pattern=_NATIONAL_ID),
)


def classify_sensitivity(text: str) -> tuple[str, list[str]]:
    secrets = find_secrets(text)
    if secrets:
        kinds = ", ".join(dict.fromkeys(finding.kind for finding in secrets))
        return Sensitivity.SECRET, [f"sensitivity: holds a secret ({kinds})"]
    personal = [cue.label for cue in PERSONAL_CUES if cue.pattern.search(text)]
    if personal:
        return Sensitivity.PERSONAL, [f"sensitivity: personal data ({', '.join(personal)})"]
    return Sensitivity.NORMAL, []

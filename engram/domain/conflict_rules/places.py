"""Wide places: continents, regions, countries and US states. A text that puts something in one of them and
another that puts it in a place that is none of them ("Our servers are in Europe" / "… in Frankfurt") may
only be saying where more precisely: without a map of what lies inside what, the rules do not call that a
contradiction. Two wide places ("in Europe" / "in the US") or two narrow ones ("in Lisbon" / "in Berlin") can
still contradict each other."""

from __future__ import annotations

_REGIONS = """
europe asia africa america north-america south-america latin-america central-america oceania antarctica
australasia middle-east far-east scandinavia nordics balkans caribbean emea apac latam eu us usa uk gb
the-us the-usa the-uk the-eu united-states united-kingdom great-britain britain england scotland wales
northern-ireland the-netherlands the-philippines the-uae uae the-middle-east the-caribbean the-balkans
""".split()
_COUNTRIES = """
afghanistan albania algeria andorra angola argentina armenia australia austria azerbaijan bahamas bahrain
bangladesh barbados belarus belgium belize benin bhutan bolivia bosnia botswana brazil brunei bulgaria burkina-faso
burundi cambodia cameroon canada chad chile china colombia congo costa-rica croatia cuba cyprus czechia
czech-republic denmark djibouti dominica dominican-republic ecuador egypt el-salvador eritrea estonia eswatini
ethiopia fiji finland france gabon gambia georgia germany ghana greece grenada guatemala guinea guyana haiti
honduras hungary iceland india indonesia iran iraq ireland israel italy jamaica japan jordan kazakhstan kenya
kosovo kuwait kyrgyzstan laos latvia lebanon lesotho liberia libya liechtenstein lithuania luxembourg madagascar
malawi malaysia maldives mali malta mauritania mauritius mexico moldova monaco mongolia montenegro morocco
mozambique myanmar namibia nepal netherlands holland new-zealand nicaragua niger nigeria north-korea
north-macedonia norway oman pakistan panama paraguay peru philippines poland portugal qatar romania russia rwanda
saudi-arabia senegal serbia seychelles sierra-leone singapore slovakia slovenia somalia south-africa south-korea
korea spain sri-lanka sudan suriname sweden switzerland syria taiwan tajikistan tanzania thailand togo tunisia
turkey turkmenistan uganda ukraine uruguay uzbekistan venezuela vietnam yemen zambia zimbabwe
""".split()
_STATES = """
alabama alaska arizona arkansas california colorado connecticut delaware florida hawaii idaho illinois indiana
iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota mississippi missouri montana
nebraska nevada new-hampshire new-jersey new-mexico new-york-state north-carolina north-dakota ohio oklahoma
oregon pennsylvania rhode-island south-carolina south-dakota tennessee texas utah vermont virginia washington-state
west-virginia wisconsin wyoming ontario quebec british-columbia alberta bavaria catalonia andalusia tuscany
""".split()
WIDE_PLACES = frozenset(w.replace("-", " ") for w in (*_REGIONS, *_COUNTRIES, *_STATES))
_LEADING = ("the ", "southern ", "northern ", "eastern ", "western ", "central ")


def is_wide_place(text: str) -> bool:
    """Whether ``text`` (a value as written: "Europe", "the Netherlands", "southern Spain") names a continent,
    region, country or state."""
    value = " ".join(text.lower().replace(",", " ").split())
    while value.startswith(_LEADING):
        value = value.split(" ", 1)[1] if " " in value else ""
    return value in WIDE_PLACES or f"the {value}" in WIDE_PLACES


def narrows(a: str, b: str) -> bool:
    """One value is a wide place and the other is not: the narrow one may lie inside it."""
    return is_wide_place(a) != is_wide_place(b)

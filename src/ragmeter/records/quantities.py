"""Reading stated quantities: numbers (digits or words), multipliers, units and currencies.

>>> read_quantity("$1,299.00")
Quantity(amount=Decimal('1299.00'), unit='currency', currencies=frozenset({...}))
>>> read_quantity("twenty-four months").amount, read_quantity("twenty-four months").unit
(Decimal('24'), 'month')
>>> read_quantity("about 1,300") is None   # approximate: not a value to check
True

Units are put in groups that convert exactly: seconds to weeks (``second``), months and
years (``month``), business days alone, percent alone, each currency code alone. Amounts
are ``Decimal`` so ``0.1 + 0.2`` problems cannot arise; equality is exact.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

# unit word -> (group base unit, factor to the base)
_UNITS: dict[str, tuple[str, Decimal]] = {}
for _names, _base, _factor in (
    (("second", "seconds", "sec", "secs", "s"), "second", 1),
    (("minute", "minutes", "min", "mins"), "second", 60),
    (("hour", "hours", "hr", "hrs", "h"), "second", 3600),
    (("day", "days", "calendar day", "calendar days", "d"), "second", 86400),
    (("week", "weeks", "wk", "wks"), "second", 604800),
    (("month", "months", "mo", "mos", "mth", "mths"), "month", 1),
    (("year", "years", "yr", "yrs", "y"), "month", 12),
    (("business day", "business days", "working day", "working days", "workday", "workdays"), "business_day", 1),
    (("%", "percent", "per cent", "pct", "percentage points"), "percent", 1),
):
    for _n in _names:
        _UNITS[_n] = (_base, Decimal(_factor))

# currency symbol or word -> the ISO codes it can stand for ("$" is several dollars)
_DOLLARS = frozenset({"USD", "CAD", "AUD", "NZD", "SGD", "HKD"})
_CURRENCY_WORDS: dict[str, frozenset[str]] = {
    "$": _DOLLARS, "us$": frozenset({"USD"}), "usd": frozenset({"USD"}), "dollar": _DOLLARS, "dollars": _DOLLARS,
    "€": frozenset({"EUR"}), "eur": frozenset({"EUR"}), "euro": frozenset({"EUR"}), "euros": frozenset({"EUR"}),
    "£": frozenset({"GBP"}), "gbp": frozenset({"GBP"}), "pound": frozenset({"GBP"}), "pounds": frozenset({"GBP"}),
    "¥": frozenset({"JPY", "CNY"}), "jpy": frozenset({"JPY"}), "yen": frozenset({"JPY"}),
    "cny": frozenset({"CNY"}), "yuan": frozenset({"CNY"}), "₹": frozenset({"INR"}), "inr": frozenset({"INR"}),
    "rupees": frozenset({"INR"}), "chf": frozenset({"CHF"}), "cad": frozenset({"CAD"}), "aud": frozenset({"AUD"}),
    "c$": frozenset({"CAD"}), "a$": frozenset({"AUD"}), "sek": frozenset({"SEK"}), "nok": frozenset({"NOK"}),
    "dkk": frozenset({"DKK"}), "pln": frozenset({"PLN"}), "brl": frozenset({"BRL"}), "r$": frozenset({"BRL"}),
    "mxn": frozenset({"MXN"}), "krw": frozenset({"KRW"}), "₩": frozenset({"KRW"}), "sgd": frozenset({"SGD"}),
    "hkd": frozenset({"HKD"}), "nzd": frozenset({"NZD"}),
}
_SYMBOLS = sorted((k for k in _CURRENCY_WORDS if not k.isalpha()), key=len, reverse=True)

_SMALL = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
     "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"])}
_TENS = {w: 10 * i for i, w in enumerate(["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                         "ninety"]) if i >= 2}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_MULTIPLIERS = {"k": 1000, "thousand": 1000, "million": 1_000_000, "mn": 1_000_000, "m": 1_000_000,
                "billion": 1_000_000_000, "bn": 1_000_000_000}
# words before a value that do not change it; anything else ("about", "over") makes it approximate
_FILLER = ("a total of", "up to", "within", "exactly", "only", "after", "total", "for", "in", "of", "at", "is")

_NUMBER = re.compile(
    r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?"      # 1,299.00
    r"|\d{1,3}(?:\.\d{3})+,\d+"                  # 1.299,00
    r"|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?"  # 1 299,00
    r"|\d+(?:[.,]\d+)?|\.\d+)")


@dataclass(frozen=True)
class Quantity:
    """An amount with an optional unit. ``unit`` is the group's base unit (``second``,
    ``month``, ``business_day``, ``percent``, ``currency``) or, for a unit ragmeter does not
    know, the unit as written (lowercased); ``currencies`` holds the ISO codes a currency
    amount can be in."""

    amount: Decimal
    unit: str | None = None
    currencies: frozenset[str] | None = None

    def describe(self) -> str:
        """The amount in words a reader checks (``730 days``, ``24 months``, ``1299 USD``)."""
        if self.unit == "currency" and self.currencies:
            if self.currencies == _DOLLARS:
                return f"${_plain(self.amount)}"
            return f"{_plain(self.amount)} {'/'.join(sorted(self.currencies))}"
        if self.unit == "second":
            for name, size in (("weeks", 604800), ("days", 86400), ("hours", 3600), ("minutes", 60)):
                if self.amount % size == 0 and self.amount != 0:
                    return f"{_plain(self.amount / size)} {name}"
            return f"{_plain(self.amount)} seconds"
        names = {"month": "months", "business_day": "business days", "percent": "%"}
        if self.unit:
            return f"{_plain(self.amount)} {names.get(self.unit, self.unit)}".replace(" %", "%")
        return _plain(self.amount)


def _plain(amount: Decimal) -> str:
    """``1299.00`` -> ``1299``, ``1.50`` -> ``1.5``, never an exponent."""
    text = format(amount, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def clean(text: str) -> str:
    """NFKC, lowercase, spaces collapsed, surrounding quotes and end punctuation dropped."""
    text = unicodedata.normalize("NFKC", str(text)).casefold()
    text = " ".join(text.split())
    return text.strip(" \"'`").rstrip(".;:!?").strip()


def parse_number(token: str) -> Decimal | None:
    """Digits with thousand separators (``1,299.50``, ``1.299,50``, ``1 299``) or a decimal comma."""
    token = token.strip().replace("\u00a0", " ").replace("\u202f", " ")
    if not _NUMBER.fullmatch(token):
        return None
    if re.fullmatch(r"[-+]?\d{1,3}(?:\.\d{3})+,\d+", token):
        token = token.replace(".", "").replace(",", ".")
    elif re.fullmatch(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?", token):
        token = token.replace(",", "")
    elif " " in token:
        token = token.replace(" ", "").replace(",", ".")
    elif re.fullmatch(r"[-+]?\d+,\d+", token):  # not thousands (group of 3): a decimal comma
        token = token.replace(",", ".")
    try:
        return Decimal(token)
    except InvalidOperation:
        return None


def parse_number_words(words: list[str]) -> Decimal | None:
    """``twenty-four``, ``one hundred and five``, ``a dozen``, ``twelve thousand``."""
    if not words:
        return None
    if words in (["a", "dozen"], ["dozen"]):
        return Decimal(12)
    total = current = 0
    seen = False
    for w in words:
        if w == "and" and seen:
            continue
        if w in _SMALL:
            current += _SMALL[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred" and seen:
            current *= 100
        elif w in _SCALES and seen:
            total += current * _SCALES[w]
            current = 0
        else:
            return None
        seen = True
    return Decimal(total + current) if seen else None


class UnreadableUnit(ValueError):
    """Text where a unit should be that is not one (``-5 days`` in ``3-5 days``)."""


def unit_of(text: str) -> tuple[str, Decimal, frozenset[str] | None] | None:
    """(base unit, factor, currencies) for a unit as written; None for no unit at all.

    A unit ragmeter does not know is kept as written (lowercased), so only the same word
    matches it; text that cannot be a unit (digits, a dash, several words) raises
    ``UnreadableUnit``."""
    t = clean(text)
    if not t:
        return None
    if t in _UNITS:
        base, factor = _UNITS[t]
        return base, factor, None
    if t in _CURRENCY_WORDS:
        return "currency", Decimal(1), _CURRENCY_WORDS[t]
    if re.fullmatch(r"[A-Z]{3}", text.strip()):
        return "currency", Decimal(1), frozenset({text.strip()})  # an ISO-looking code ragmeter does not list
    if not re.fullmatch(r"[^\W\d_][^\W\d]*(?:[ /.][^\W\d_][^\W\d]*){0,2}|[^\W\d_]*[²³]", t):
        raise UnreadableUnit(t)
    return t, Decimal(1), None


def read_quantity(text: str, unit: str | None = None) -> Quantity | None:
    """The quantity ``text`` states (with ``unit`` as a separate hint), or None when it is not
    one exact quantity (a range, an approximation, prose)."""
    try:
        return _read_quantity(text, unit)
    except UnreadableUnit:
        return None


def _read_quantity(text: str, unit: str | None) -> Quantity | None:
    t = clean(text)
    hint = unit_of(unit) if unit else None
    for filler in _FILLER:
        if t.startswith(filler + " "):
            t = t[len(filler) + 1:]
    currencies: frozenset[str] | None = None
    for sym in _SYMBOLS:  # a currency symbol before or after the number
        if t.startswith(sym):
            currencies, t = _CURRENCY_WORDS[sym], t[len(sym):].strip()
            break
        if t.endswith(sym):
            currencies, t = _CURRENCY_WORDS[sym], t[: -len(sym)].strip()
            break
    code = re.match(r"^([a-z]{3})\s+(?=[\d.+-])", t)  # "usd 1,299"
    if currencies is None and code and code.group(1) in _CURRENCY_WORDS:
        currencies, t = _CURRENCY_WORDS[code.group(1)], t[code.end():]
    amount, rest = _leading_amount(t)
    if amount is None:
        return None
    rest = rest.strip()
    mult = re.match(r"^(k|thousand|million|mn|m|billion|bn)\b\s*", rest)
    if mult and (currencies is not None or mult.group(1) not in ("m",)):
        amount *= _MULTIPLIERS[mult.group(1)]
        rest = rest[mult.end():]
    written = unit_of(rest) if rest else None
    if written is not None and written[0] == "currency" and currencies is not None and written[2] is not None:
        both = currencies & written[2]
        if not both:
            return None  # "$5 EUR": contradicts itself
        currencies, written = both, None
    if written is None and currencies is None and hint is not None:
        written = hint
    if currencies is not None and written is None:
        return Quantity(amount, "currency", currencies)
    if written is None:
        return Quantity(amount)
    base, factor, codes = written
    if currencies is not None and base != "currency":
        return None  # "$5 months"
    return Quantity(amount * factor, base, codes)


def _leading_amount(t: str) -> tuple[Decimal | None, str]:
    m = re.match(r"^(" + _NUMBER.pattern + r")(?![\d])", t)
    if m:
        value = parse_number(m.group(1))
        return value, t[m.end():]
    words = re.split(r"[\s-]+", t)
    for n in range(len(words), 0, -1):  # the longest run of number words at the start
        value = parse_number_words(words[:n])
        if value is not None:
            return value, " ".join(words[n:])
    if words and words[0] in ("a", "an", "one") and len(words) > 1 and unit_of(" ".join(words[1:])) is not None \
            and clean(" ".join(words[1:])) in _UNITS:
        return Decimal(1), " ".join(words[1:])  # "a year"
    return None, t

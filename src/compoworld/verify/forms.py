"""Equivalent written forms: what a person would accept as the same date, phone number or contact.

Checks compare through these, so a correct agent that writes "March 10, 2026", "+1 (555) 132-5763"
or "Sara Chen" where the task recorded "2026-03-10", "+15551325763" or "sara.chen@acme.example"
passes, while a different value still fails.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ]
    )
    for m in names
}
_ZONES = {"utc": 0, "gmt": 0, "z": 0, "cet": 60, "cest": 120, "bst": 60, "est": -300, "edt": -240}
_ZONES |= {"pst": -480, "pdt": -420, "cst": -360, "cdt": -300, "sgt": 480}
_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?)?", re.I
)
_MDY = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_WORDY = re.compile(
    r"\b(?:(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+(?P<m1>[a-z]{3,9})\.?,?\s+(?P<y1>\d{4})"
    r"|(?P<m2>[a-z]{3,9})\.?\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{4}))\b",
    re.I,
)
_TIME = re.compile(
    r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?\s*([a-z]{1,4}|[+-]\d{2}:?\d{2})?\b", re.I
)


def _offset(tz: str | None) -> timedelta | None:
    if not tz:
        return None
    t = tz.strip().lower()
    if t in _ZONES:
        return timedelta(minutes=_ZONES[t])
    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", t)
    if m:
        sign = 1 if m.group(1) == "+" else -1
        return sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
    return None


def parse_when(text: str, default_tz: str | None = None) -> datetime | date | None:
    """A datetime (aware, UTC) or a date from one written form, or None when there is none.

    Accepts ISO 8601 (with Z or an offset), "March 10, 2026", "10 March 2026", "03/10/2026"
    (month first, as US users write), each optionally followed by a time such as "3pm", "15:00 CET".
    A time without a zone is read in `default_tz` (an IANA name), else UTC.
    """
    if not isinstance(text, str):
        return None
    s = text.strip()
    m = _ISO.search(s)
    rest = ""
    if m:
        d = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if m.group(4) is None:
            rest = s[m.end() :]
            hour = None
        else:
            hour, minute, sec = int(m.group(4)), int(m.group(5)), int(m.group(6) or 0)
            return _aware(d, hour, minute, sec, m.group(7), default_tz)
    else:
        w = _WORDY.search(s)
        mdy = _MDY.search(s)
        try:
            if w:
                mon = _MONTHS.get((w.group("m1") or w.group("m2")).lower())
                if mon is None:
                    return None
                d = date(int(w.group("y1") or w.group("y2")), mon, int(w.group("d1") or w.group("d2")))
                rest = s[w.end() :]
            elif mdy:
                d = date(int(mdy.group(3)), int(mdy.group(1)), int(mdy.group(2)))
                rest = s[mdy.end() :]
            else:
                return None
        except ValueError:
            return None
    t = _TIME.search(re.sub(r"^\s*(at|,)\s*", " ", rest, flags=re.I)) if rest.strip() else None
    if t and (t.group(2) or t.group(3)):
        hour, minute = int(t.group(1)), int(t.group(2) or 0)
        ampm = (t.group(3) or "").lower().replace(".", "")
        if ampm == "pm" and hour < 12:
            hour += 12
        if ampm == "am" and hour == 12:
            hour = 0
        if hour > 23 or minute > 59:
            return d
        return _aware(d, hour, minute, 0, t.group(4), default_tz)
    return d


def _aware(
    d: date, hour: int, minute: int, sec: int, tz: str | None, default_tz: str | None
) -> datetime | None:
    try:
        naive = datetime(d.year, d.month, d.day, hour, minute, sec)
    except ValueError:
        return None
    off = _offset(tz)
    if off is not None:
        return (naive - off).replace(tzinfo=UTC)
    zone = ZoneInfo(default_tz) if default_tz else UTC
    return naive.replace(tzinfo=zone).astimezone(UTC)


def same_when(value: object, expected: str, default_tz: str | None = None) -> bool:
    """`value` names the same instant (or, when `expected` is a date, the same day) as `expected`."""
    a = parse_when(str(value), default_tz) if value is not None else None
    b = parse_when(expected)
    if a is None or b is None:
        return False
    if isinstance(b, datetime) and isinstance(a, datetime):
        return a == b
    if isinstance(b, datetime):
        return False  # a time was asked for and only a day was given
    return (a.date() if isinstance(a, datetime) else a) == b


def phone_digits(value: object) -> str:
    """Digits of a phone number without a leading US country code: "+1 (555) 132-5763" -> "5551325763"."""
    d = re.sub(r"\D", "", str(value))
    return d[1:] if len(d) == 11 and d.startswith("1") else d


def same_phone(value: object, expected: str) -> bool:
    a, b = phone_digits(value), phone_digits(expected)
    return len(b) >= 7 and a == b


_ADDR = re.compile(r"<\s*([^<>\s]+@[^<>\s]+)\s*>")


def person_matches(value: object, forms: list[str]) -> bool:
    """A recipient field names the person: by email, by full name, or as "Name <email>"."""
    if value is None:
        return False
    s = str(value).strip()
    m = _ADDR.search(s)
    cands = {norm_text(s)}
    if m:
        cands |= {norm_text(m.group(1)), norm_text(s[: m.start()].strip(' "'))}
    return any(norm_text(f) in cands for f in forms if f)


def norm_text(v: object) -> str:
    if type(v) is str:  # a str subclass may print otherwise
        return _norm_str(v)
    return re.sub(r"\s+", " ", str(v)).strip().casefold()


@lru_cache(maxsize=16384)
def _norm_str(v: str) -> str:
    # the same record texts and facts are normalised once per check and adversary: once is enough
    return _SPACE.sub(" ", v).strip().casefold()


_SPACE = re.compile(r"\s+")


def contains_phone(text: str, expected: str) -> bool:
    want = phone_digits(expected)
    return any(phone_digits(m) == want for m in re.findall(r"\+?[\d][\d\s().-]{6,}\d", text))


_NO_YEAR = (
    re.compile(r"\b(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>[a-z]{3,9})\b(?!,?\s*\d{4})", re.I),
    re.compile(r"\b(?P<m2>[a-z]{3,9})\.?\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?\b(?!,?\s*\d{4})", re.I),
)


def contains_when(text: str, expected: str) -> bool:
    """Some date written in `text` (in any accepted form) is the expected day or instant; a day
    written without its year ("March 9", "9 Mar") is read in the expected year."""
    spans = [m.group(0) for m in _ISO.finditer(text)] + [m.group(0) for m in _WORDY.finditer(text)]
    spans += [m.group(0) for m in _MDY.finditer(text)]
    year = expected[:4] if re.match(r"\d{4}-", expected or "") else None
    if year:
        for m in (m for rx in _NO_YEAR for m in rx.finditer(text)):
            g = m.groupdict()
            mon = (g.get("m1") or g.get("m2") or "").lower()
            if mon not in _MONTHS:
                continue
            day = g.get("d1") or g.get("d2")
            with_year = f"{m.group(0)}, {year}" if g.get("m2") else f"{day} {g['m1']} {year}"
            i = m.end()
            if same_when(with_year + text[i : i + 16], expected) or same_when(with_year, expected):
                return True
            t = _TIME_BEFORE.search(text[max(0, m.start() - 28) : m.start()])
            if t and (t.group(2) or t.group(3)) and same_when(f"{with_year} {t.group(0).strip()}", expected):
                return True
    for sp in spans:
        i = text.find(sp)
        if same_when(text[i : i + len(sp) + 16], expected) or same_when(sp, expected):
            return True
        # the time written before the day: "2:30 PM UTC on March 9, 2026", "15:30 CET, 9 March 2026"
        t = _TIME_BEFORE.search(text[max(0, i - 28) : i])
        if t and (t.group(2) or t.group(3)) and same_when(f"{sp} {t.group(0).strip()}", expected):
            return True
    return False


_TIME_BEFORE = re.compile(
    r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?\s*([A-Za-z]{1,4}\b|[+-]\d{2}:?\d{2})?"
    r"\s*(?:on|,)?\s*(?:[A-Za-z]+day,?\s*)?$",
    re.I,
)

"""Is an answer committed? It gives the asked value as *the* answer, in the right unit.

Fails (the reason is returned):
- a refusal or a doubt ("I could not verify it", "not sure") anywhere in the answer;
- a hedge in the clause that gives the value ("or", "maybe", "either", "possibly", "?");
- a range or alternative beside the value ("5 or 7", "5870-5880", "between 5 and 7");
- another candidate of the same shape in the value's own clause (a list of candidates), or two or
  more unlabelled candidates elsewhere (a dump), unless the question asks for a list;
- the value in another currency or unit than the one asked.
Allowed: labelled context about other records in its own clause ("#1016-#1019 were already booked",
"the closed invoice of 300.00 does not count"), and a breakdown whose parts add up to the value.
"""

from __future__ import annotations

import re

from compoworld.verify.meaning import amounts

_REFUSAL = re.compile(
    r"\b(?:could ?n[o']t|can ?n[o']t|can't|cannot|unable to|not able to|was ?n[o']t able to|did ?n[o']t manage to)"
    r"\s+(?:\w+\s+){0,2}?(?:verify|confirm|determine|find|tell|work out|be sure|say|check|access|locate|"
    r"figure out|identify|compute|calculate|be certain)\b"
    r"|\bi (?:do ?n[o']t|don't) know\b|\bnot (?:\d+% |entirely |completely |quite )?(?:sure|certain)\b|\bunsure\b"
    r"|\bno way to (?:tell|know)\b|\bunverified\b|\bcould ?n[o']t be (?:verified|confirmed)\b"
    r"|\bi (?:would|'d) guess\b|\bmy (?:best )?guess\b|\bcannot be (?:determined|verified)\b",
    re.I,
)
_HEDGE = re.compile(
    r"\b(?:or|maybe|perhaps|possibly|probably|either|might|likely|roughly|approximately|approx|around|"
    r"somewhere|guess|unclear|presumably|could be|may be|or so|vs|versus|tentative|tentatively|estimated?|"
    r"ballpark|circa)\b|\?|\s/\s",
    re.I,
)
# a clause about another record says what it is: that is context, not a candidate
# a hedge that sits right before a number ("about 14723.00", "~14723"): read with the value in place
_NEAR = re.compile(r"\b(?:about|around|roughly|nearly|almost|approx\.?)\s+[$€£]?\s?\d|~\s*[$€£]?\d", re.I)
_LABEL = re.compile(
    r"\b(?:already|booked|closed|cancell?ed|excluded|exclude|not|no longer|stale|expired|paid|was|were|"
    r"previous|previously|last|old|older|earlier|past|before|skipped|ignored|isn't|aren't|wasn't|weren't|"
    r"doesn't|don't|didn't|won't|instead|rather|except|other|others|superseded|retired|archived|"
    r"duplicate|taken|used|counted separately|left out|leaving out|ruled out|discarded|draft|lapsed|"
    # a person who is out of the picture: the reason another is asked instead
    r"has left|have left|left (?:the |our )?(?:company|team|business|firm|organi[sz]ation)|inactive|"
    r"departed|deactivated|on leave|out of office|in place of|fallback)\b",
    re.I,
)
_RANGE = re.compile(r"^\s*(?:or|/|to|-|–|—|~|,|and|vs\.?|between|through|thru)\s*$", re.I)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE = re.compile(r"(?<=[.!?;:,])\s+|\n+|\s[—–-]\s|[()]")

_UNITS = {
    "minute": "time",
    "min": "time",
    "hour": "time",
    "hr": "time",
    "day": "time",
    "week": "time",
    "month": "time",
    "year": "time",
    "second": "time",
    "%": "share",
    "percent": "share",
    "kb": "data",
    "mb": "data",
    "gb": "data",
    "tb": "data",
    "kg": "mass",
    "lb": "mass",
    "g": "mass",
}


def clauses(text: str) -> list[str]:
    return [c for c in _CLAUSE.split(text) if c and c.strip()]


def _unit_after(text: str, end: int) -> str | None:
    m = re.match(r"\s?(%|[A-Za-z]+)", text[end:])
    if not m:
        return None
    w = m.group(1).casefold()
    w = w[:-1] if w.endswith("s") and w[:-1] in _UNITS else w
    return w if w in _UNITS else None


def _shape(value: str) -> re.Pattern[str] | None:
    """Tokens that look like the value (RMA-66787 -> RMA-\\d{5}): other candidates of its kind."""
    v = value.strip().lstrip("#")
    if not re.search(r"\d", v) or " " in v:
        return None
    pat = re.sub(r"\d+", lambda m: rf"\d{{{len(m.group())}}}", re.escape(v))
    return re.compile(r"(?<![\w])#?" + pat + r"(?![\w])", re.I)


def commitment_problem(
    answer: str,
    value: str,
    kind: str,
    hit: tuple[int, int] | None,
    others: list[str] = (),  # type: ignore[assignment]
    currency: str | None = None,
    unit: str | None = None,
    is_list: bool = False,
    tol: float = 0.01,
) -> str | None:
    """Why the answer does not commit to the value (None when it does). `hit` is the span of the
    answer that gives the value; `others` are known competing candidates."""
    if _REFUSAL.search(answer):
        return "the answer refuses or doubts instead of committing"

    def labelled(clause: str) -> bool:
        # a label word inside a candidate's own name ("Offsite agenda draft") labels nothing
        return bool(_LABEL.search(_without_values(clause, [value, *others])))

    spans = _spans(answer, _CLAUSE)
    sentences = _spans(answer, _SENTENCE)
    at = hit[0] if hit else 0
    sentence = next(((s, e) for s, e, _ in sentences if s <= at < e), (0, len(answer)))
    own = [c for s, e, c in spans if s <= at < e]
    for s, _e, c in spans:
        if not (sentence[0] <= s < sentence[1]):
            continue
        hedged = _HEDGE.search(_without_value(c, value)) or (c in own and _NEAR.search(c))
        if (c in own or not labelled(c)) and hedged:
            return "the answer hedges the value (an alternative, a maybe or a question)"
    if kind == "number":
        want = _num(value)
        found = amounts(answer)
        for (x, _cx, _, xe), (y, _cy, ys, _) in zip(found, found[1:], strict=False):
            one, two = abs(x - want) <= tol, abs(y - want) <= tol
            if one != two and _RANGE.match(answer[xe:ys].replace("$", "").replace("€", "").replace("£", "")):
                return "the answer offers the value beside another as a range or alternative"
        mine = [f for f in found if abs(f[0] - want) <= tol]
        if not mine:
            return None
        money = bool(currency) or "." in value
        for _v, cur, s, e in mine:
            if currency and cur and cur != currency.upper():
                return f"the answer gives the value in {cur}, not {currency.upper()}"
            if unit == "count" and cur:
                return f"the answer gives a count in {cur}"
            num = re.match(r"\D{0,5}?-?[\d,]+(?:\.\d+)?", answer[s:e])
            u = _unit_after(answer, s + num.end() if num else e)
            if unit and u and _UNITS.get(u) == _UNITS.get(unit) and u != unit:
                return f"the answer gives the value in {u}, not {unit}"
            if money and u and _UNITS.get(u) in ("time", "share", "data", "mass"):
                return f"the answer gives an amount in {u}"
        if is_list:
            return None
        rivals = [f for f in found if abs(f[0] - want) > tol and (not money or _moneyish(answer, f))]
        loose = [f for f in rivals if not labelled(_clause_at(spans, f[2]))]
        in_own = [f for f in loose if any(s <= f[2] < e for s, e, c in spans if c in own)]
        parts_sum = sum(f[0] for f in rivals)
        if rivals and abs(parts_sum - want) <= tol * max(1, len(rivals)):
            return None  # a breakdown: the parts add up to the value
        if in_own:
            return "the answer names other candidates beside the value"
        if len(loose) >= 2:
            return "the answer lists candidate values instead of one"
        return None
    if is_list:
        return None
    shape = _shape(value)
    cands = []
    if shape is not None:
        cands = [m for m in shape.finditer(answer) if _norm(m.group()) != _norm(value)]
    for o in others:
        for m in re.finditer(r"(?<![\w])" + re.escape(o) + r"(?![\w])", answer, re.I):
            if not (hit and m.start() >= hit[0] and m.end() <= hit[1]):
                cands.append(m)
    loose = [m for m in cands if not labelled(_clause_at(spans, m.start()))]
    if any(any(s <= m.start() < e for s, e, c in spans if c in own) for m in loose):
        return "the answer names other candidates beside the value"
    if len(loose) >= 2:
        return "the answer lists candidate values instead of one"
    return None


def _spans(text: str, splitter: re.Pattern[str]) -> list[tuple[int, int, str]]:
    out, pos = [], 0
    for m in [*splitter.finditer(text), None]:
        end = m.start() if m else len(text)
        if text[pos:end].strip():
            out.append((pos, end, text[pos:end]))
        pos = m.end() if m else len(text)
    return out


def _clause_at(spans: list[tuple[int, int, str]], at: int) -> str:
    return next((c for s, e, c in spans if s <= at < e), "")


def _moneyish(answer: str, f: tuple[float, str | None, int, int]) -> bool:
    v, cur, s, e = f
    return cur is not None or bool(re.search(r"\.\d{2}$", answer[s:e].strip())) or v >= 100


def _without_value(text: str, value: str) -> str:
    """The clause without the value itself (a value may contain '?' or 'or' in a name)."""
    return re.sub(re.escape(value), " ", text, flags=re.I) if value else text


def _without_values(text: str, values: list[str]) -> str:
    for v in sorted((str(x) for x in values if x), key=len, reverse=True):
        text = re.sub(r"(?<![\w])" + re.escape(v) + r"(?![\w])", " ", text, flags=re.I)
    return text


def _num(v: str) -> float:
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return 0.0


def _norm(s: str) -> str:
    return s.casefold().lstrip("#")

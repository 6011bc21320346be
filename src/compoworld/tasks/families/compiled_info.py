"""Families over compiled info tools: questions a colleague asks that the service's seeded provider answers.

A compiled info tool (`compiler/compute.py`: weather and forecasts, prices and price histories,
exchange rates, geocoding, distances and elevations, IP locations, an account's balance and API
usage) answers from a provider seeded by the world: the same question gets the same answer, and no
model knows it beforehand. `info_question` is the work a person asks a colleague for with such a
service: a colleague's email asks a question whose answer takes two or more lookups and a comparison
or a computation ("which of Lisbon, Osaka and Denver is warmest right now?", "which of the two quotes
is cheaper in USD?", "how much would be left on our balance after the 312.40 top-up?"); the agent
reads it, looks each one up, works the answer out and replies on the thread. The rivals are the
near misses a careless agent gives: the other city, the other quote, the inverse rate, the figure
before the computation. The reply must carry the answer's value and none of theirs.

It applies only where such a tool exists and takes the inputs the question gives (a city, a ticker,
a currency pair, an address); the probe plants and solves it on a seeded copy of the service, as the
record families do (`compiled.probe`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jsonschema

from compoworld.compiler.compute import GAZETTEER, USD_VALUE
from compoworld.core.envelope import ToolError
from compoworld.tasks.families._compiled_mail import (
    _colleague,
    _mail,
    _probe_world,
    _reply,
    display,
)
from compoworld.tasks.phrasing import frame
from compoworld.tasks.workflow import Builder, Family, PlantError

# the provider functions a question can be asked of (service health and identity are no question)
FNS = (
    "weather",
    "forecast",
    "price",
    "price_history",
    "fx",
    "geocode",
    "directions",
    "distance_matrix",
    "elevation",
    "ip_geolocation",
    "balance",
    "usage",
)
STOCKS = ("NVDA", "MSFT", "AAPL", "AMZN", "GOOGL", "META", "TSLA", "ORCL", "ADBE", "CRM", "INTC", "AMD")
COINS = ("BTC", "ETH", "SOL", "ADA", "DOT", "LINK", "AVAX", "ATOM", "XRP", "LTC")
CURRENCIES = ("EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "SEK", "CNY", "INR")
STREETS = ("Harbor Street", "Mill Road", "Station Avenue", "Market Lane", "Canal Way", "Park Row")
STREETS += ("Bridge Street", "Orchard Road", "Quay Side", "Foundry Lane")
SITES = ("warehouse", "depot", "office", "store", "site")


@dataclass(frozen=True)
class Info:
    """One compiled info tool a question can use."""

    service: str
    tool: dict[str, Any]
    fn: str

    @property
    def name(self) -> str:
        return f"{self.service}__{self.tool['name']}"

    @property
    def params(self) -> list[str]:
        return [p for p in self.tool["op"].get("params", []) if p]


def infos_of(cls: Any) -> list[Info]:
    """The info tools of a compiled service class that a question can be put to."""
    out = []
    for t in cls.manifest["tools"]:
        op = t["op"]
        if t["status"] != "compiled" or op.get("kind") != "compute" or not op.get("info"):
            continue
        fn = op.get("fn")
        if fn not in FNS:
            continue
        req = set(t["input_schema"].get("required", []))
        params = [p for p in op.get("params", []) if p]
        if req - set(params):
            continue  # it needs a value no question gives
        if fn == "balance" and params:
            continue  # a wallet's or an account's id: nothing a colleague's question names
        if (
            fn in ("weather", "forecast", "price", "price_history", "geocode", "ip_geolocation")
            and not params
        ):
            continue  # no input: the same answer for every place or symbol
        if fn == "fx" and len(params) < 2:
            continue
        out.append(Info(cls.name, t, fn))
    return out


# ---- how a question is put to the tool ------------------------------------------------------------
def _typed(value: Any, schema: dict[str, Any]) -> Any:
    t = schema.get("type")
    if t == "object" and not isinstance(value, dict):  # a query object: the value goes in its text field
        from compoworld.compiler.compute import WRAPPED_INPUTS

        inner = schema.get("properties") or {}
        key = next((k for k in inner if re.sub(r"[^a-z0-9]", "", k.lower()) in WRAPPED_INPUTS), None)
        return {key: _typed(value, inner[key])} if key else value
    if t == "array" and not isinstance(value, list):
        return [value]
    if t in ("number", "integer") and isinstance(value, str):
        return float(value) if t == "number" else int(float(value))
    return value


def _args(info: Info, values: list[Any]) -> dict[str, Any]:
    props = info.tool["input_schema"].get("properties", {})
    args = {
        p: _typed(v, props.get(p, {})) for p, v in zip(info.params, values, strict=False) if v is not None
    }
    errors = list(jsonschema.Draft202012Validator(info.tool["input_schema"]).iter_errors(args))
    if errors:
        raise PlantError(f"{info.tool['name']} refuses the question's values: {errors[0].message}")
    return args


def _peek(b: Builder, info: Info, values: list[Any]) -> Any:
    """What the provider answers (read-only, before s0), to choose a question with a clear answer."""
    r = b.env.call(info.name, _args(info, values))
    if not r["success"]:
        raise PlantError(f"{info.tool['name']}: {r['error']['message']}")
    return r["data"]


def _ask(b: Builder, info: Info, values: list[Any]) -> Any:
    return b.call(info.name, _args(info, values))


def _num(x: float, places: int = 2) -> str:
    return f"{x:.{places}f}"


def _clear(values: list[float], best: float, margin: float) -> bool:
    """The best value beats every other by `margin` (no near tie a rounding could flip)."""
    return sum(abs(v - best) < margin for v in values) == 1


@dataclass
class Question:
    """A question: the email's ask, the reads that answer it, the answer and its near misses."""

    subject: str
    ask: str  # the email's question, in the colleague's words
    answer: str  # the label of the answer (a city, a ticker, a quote) or the figure itself
    value: str  # the figure the reply must carry
    rivals: list[tuple[str, str, str]]  # (trap kind, description, the rival's figure)
    reads: Callable[[], None]  # the reference's lookups (after begin)
    say: str  # the reply's sentence
    what: str  # what the figure is, for the checks
    hint: str
    topic: str  # the instruction's few words for the subject ("the weather", "two quotes")
    number: bool = True  # the answer is a figure (else a label)
    strict: bool = False  # the rivals are stated in the request, yet the reply commits to one (an IP)
    # the looked-up figures a computed answer rests on: the request asks for them too, so the reply
    # shows its working (and no one could write it without the lookups)
    inputs: tuple[str, ...] = ()


def _cities(b: Builder, n: int) -> list[str]:
    return [c[0] for c in b.pick(GAZETTEER, n)]


def q_weather(b: Builder, info: Info, name: str) -> Question:
    forecast = info.fn == "forecast"
    for _ in range(20):
        cities = _cities(b, 3)
        if forecast:
            temps = [float(_peek(b, info, [c])["days"][1]["high_c"]) for c in cities]
        else:
            temps = [float(_peek(b, info, [c])["temperature_c"]) for c in cities]
        warm = b.rng.random() < 0.6
        best = max(temps) if warm else min(temps)
        if _clear(temps, best, 1.0) and len({str(t) for t in temps}) == 3:
            break
    else:
        raise PlantError("no three cities with a clear answer")
    i = temps.index(best)
    word = "warmest" if warm else "coolest"
    when = "tomorrow (the forecast high)" if forecast else "right now"
    listed = f"{cities[0]}, {cities[1]} or {cities[2]}"

    def reads() -> None:
        for c in cities:
            _ask(b, info, [c])

    return Question(
        subject=b.say("Weather check", "Which city?", "Quick weather question"),
        ask=f"For the team offsite shortlist: which of {listed} is {word} {when}, going by {name}? "
        "Please tell me the temperature too.",
        answer=cities[i],
        value=str(best),
        rivals=[
            ("near_miss", f"{c}, another city on the list", str(t))
            for c, t in zip(cities, temps, strict=True)
            if c != cities[i]
        ],
        reads=reads,
        say=f"{cities[i]} is the {word} {'tomorrow' if forecast else 'right now'}, at {best} °C.",
        what=f"the {word} city's temperature",
        hint=f"Look up the {'forecast' if forecast else 'current weather'} in {name} for each of the three cities, "
        f"compare the {'highs for tomorrow' if forecast else 'temperatures'} and reply with the {word} one.",
        topic="the weather",
        number=False,
    )


def _symbols(info: Info) -> tuple[str, ...]:
    words = " ".join([info.tool["name"], *info.params, str(info.tool.get("description", ""))]).lower()
    return COINS if re.search(r"coin|crypto|token", words) else STOCKS


def q_price(b: Builder, info: Info, name: str) -> Question:
    syms = _symbols(info)
    if b.rng.random() < 0.5:  # the best mover of three
        for _ in range(20):
            picks = b.pick(syms, 3)
            moves = [float(_peek(b, info, [s])["change_percent"]) for s in picks]
            best = max(moves)
            if _clear(moves, best, 0.25) and len({str(m) for m in moves}) == 3:
                break
        else:
            raise PlantError("no three symbols with a clear best mover")
        i = moves.index(best)

        def reads() -> None:
            for s in picks:
                _ask(b, info, [s])

        return Question(
            subject=b.say("Today's movers", "Which one did best?", "Price check"),
            ask=f"Of {picks[0]}, {picks[1]} and {picks[2]}, which has done best today (percent change since the "
            f"previous close) in {name}? Send me the percentage too.",
            answer=picks[i],
            value=str(best),
            rivals=[
                ("near_miss", f"{s}, another symbol on the list", str(m))
                for s, m in zip(picks, moves, strict=True)
                if s != picks[i]
            ],
            reads=reads,
            say=f"{picks[i]} did best today: {best}% since the previous close.",
            what="the best mover's change",
            hint=f"Look up each of the three symbols in {name}, compare their change since the previous close "
            "and reply with the best one and its percentage.",
            topic="today's prices",
            number=False,
        )
    # the value of two holdings at the current price
    a, c = b.pick(syms, 2)
    qa, qc = b.rng.randrange(12, 90), b.rng.randrange(12, 90)
    pa, pc = (_peek(b, info, [s]) for s in (a, c))
    total = qa * float(pa["price"]) + qc * float(pc["price"])
    stale = qa * float(pa["previous_close"]) + qc * float(pc["previous_close"])
    if abs(total - stale) < 1:
        raise PlantError("the previous close gives the same total")

    def reads() -> None:
        _ask(b, info, [a])
        _ask(b, info, [c])

    b.composed(_num(total))
    return Question(
        subject=b.say("Position value", f"What are our {a} and {c} worth?", "Quick valuation"),
        ask=f"We hold {qa} {a} and {qc} {c}. What are they worth together at the current price in {name} "
        "(in USD, to the cent)? Please include the two prices you used.",
        answer=_num(total),
        value=_num(total),
        rivals=[
            ("stale", "the value at the previous close", _num(stale)),
            ("partial", f"the {a} position alone", _num(qa * float(pa["price"]))),
        ],
        reads=reads,
        say=f"At the current prices ({a} {pa['price']}, {c} {pc['price']}) the {qa} {a} and {qc} {c} are worth "
        f"{_num(total)} USD together.",
        inputs=(str(pa["price"]), str(pc["price"])),
        what="the positions' value",
        hint=f"Look up the current price of {a} and of {c} in {name}, multiply each by the holding and add them up.",
        topic="our positions",
    )


def q_price_history(b: Builder, info: Info, name: str) -> Question:
    syms = _symbols(info)
    a, c = b.pick(syms, 2)
    highs = []
    for s in (a, c):
        d = _peek(b, info, [s])
        highs.append(max(float(x) for x in d["closes"]))
    if abs(highs[0] - highs[1]) < 1:
        raise PlantError("the two highs are too close")
    i = 0 if highs[0] > highs[1] else 1
    win = (a, c)[i]

    def reads() -> None:
        _ask(b, info, [a])
        _ask(b, info, [c])

    b.aggregate()
    return Question(
        subject=b.say("30-day highs", f"{a} vs {c}", "Price history question"),
        ask=f"Which reached the higher closing price over the last 30 days in {name}, {a} or {c}? "
        "And what was that highest close?",
        answer=win,
        value=_num(highs[i]),
        rivals=[("near_miss", f"{(a, c)[1 - i]}, the other symbol", _num(highs[1 - i]))],
        reads=reads,
        say=f"{win} had the higher 30-day close: {_num(highs[i])}.",
        what="the higher 30-day close",
        hint=f"Look up the price history of {a} and of {c} in {name}, take each one's highest close and compare.",
        topic="price history",
        number=False,
    )


def q_fx(b: Builder, info: Info, name: str) -> Question:
    has_amount = len(info.params) > 2
    for _ in range(20):
        ca, cb = b.pick(CURRENCIES, 2)
        base = "USD"
        aa = b.rng.randrange(1800, 9800)
        # the second quote is close to the first in value, so only the rates decide
        ab = round(aa * USD_VALUE[ca] / USD_VALUE[cb] * b.rng.choice((0.93, 0.96, 1.04, 1.07)))
        outs, rates = [], []
        for cur, amt in ((ca, aa), (cb, ab)):
            d = _peek(b, info, [cur, base, amt] if has_amount else [cur, base])
            outs.append(float(d["converted"]) if has_amount else amt * float(d["rate"]))
            rates.append(str(d["rate"]))
        if abs(outs[0] - outs[1]) > 5 and _num(outs[0]) != _num(outs[1]):
            break
    else:
        raise PlantError("no two quotes that differ in USD")
    i = 0 if outs[0] < outs[1] else 1
    amounts = ((ca, aa), (cb, ab))

    def reads() -> None:
        for cur, amt in amounts:
            _ask(b, info, [cur, base, amt] if has_amount else [cur, base])

    b.composed(_num(outs[i]))
    cur = amounts[i][0]
    return Question(
        subject=b.say("Two quotes", "Which quote is cheaper?", "Vendor quotes in two currencies"),
        ask=f"We have two quotes for the same job: {aa} {ca} and {ab} {cb}. Which one is cheaper in USD at "
        f"today's rate in {name}, and what is it in USD (to the cent)?"
        + ("" if has_amount else " Please include the rate you used."),
        answer=_num(outs[i]),
        value=_num(outs[i]),
        rivals=[("near_miss", "the other quote in USD", _num(outs[1 - i]))],
        reads=reads,
        say=f"the quote in {cur} is cheaper: {_num(outs[i])} USD at today's rate"
        + ("." if has_amount else f" ({rates[i]} USD per {cur})."),
        inputs=() if has_amount else (rates[i],),
        what="the cheaper quote in USD",
        hint=f"Convert each quote to USD with today's rate in {name} and compare.",
        topic="two vendor quotes",
    )


def _addresses(b: Builder, n: int) -> tuple[str, list[str]]:
    city = b.pick(GAZETTEER)[0]
    streets = b.pick(STREETS, n)
    return city, [f"{b.rng.randrange(2, 240)} {s}, {city}" for s in streets]


def q_geo(b: Builder, info: Info, name: str) -> Question:
    site = b.pick(SITES)
    for _ in range(20):
        city, addrs = _addresses(b, 3 if info.fn != "geocode" else 2)
        if info.fn == "geocode":
            vals = [float(_peek(b, info, [a])["results"][0]["lat"]) for a in addrs]
            best, margin = max(vals), 0.002
        elif info.fn == "elevation":
            vals = [float(_peek(b, info, [a])["results"][0]["elevation_m"]) for a in addrs]
            best, margin = max(vals), 5.0
        else:  # the first address is the customer; which of the other two is closer by road
            cust, addrs = addrs[0], addrs[1:]
            if info.fn == "directions":
                vals = [float(_peek(b, info, [a, cust, "driving"])["legs"][0]["distance_km"]) for a in addrs]
            else:
                vals = [
                    float(_peek(b, info, [a, cust, "driving"])["rows"][0]["elements"][0]["distance_km"])
                    for a in addrs
                ]
            best, margin = min(vals), 0.3
        if _clear(vals, best, margin) and len({str(v) for v in vals}) == len(vals):
            break
    else:
        raise PlantError("no sites with a clear answer")
    i = vals.index(best)
    win = addrs[i]
    if info.fn == "geocode":
        ask = (
            f"Our two {site} candidates in {city} are at {addrs[0]} and {addrs[1]}. Which one is further north "
            f"(going by {name}'s coordinates)? Send me its latitude too."
        )
        say, what = f"{win} is further north, at latitude {best}.", "the northern site's latitude"
        hint = f"Geocode both addresses in {name} and compare their latitudes."
    elif info.fn == "elevation":
        ask = (
            f"Which of our {site} sites sits highest: {addrs[0]}, {addrs[1]} or {addrs[2]}? It's for the flood "
            f"risk review, so please give me the elevation from {name}."
        )
        say, what = f"{win} sits highest, at {best} m.", "the highest site's elevation"
        hint = f"Look up the elevation of each address in {name} and compare."
    else:
        ask = (
            f"A customer at {cust} needs a delivery. Which of our two {site}s is closer by road, {addrs[0]} or "
            f"{addrs[1]}? Please include the driving distance from {name}."
        )
        say, what = f"{win} is closer: {best} km by road.", "the closer site's distance"
        hint = f"Get the driving distance in {name} from each {site} to the customer's address and compare."

    def reads() -> None:
        for a in addrs:
            if info.fn in ("geocode", "elevation"):
                _ask(b, info, [a])
            else:
                _ask(b, info, [a, cust, "driving"])

    return Question(
        subject=b.say(f"{site.capitalize()} question", f"Which {site}?", f"{city} {site}s"),
        ask=ask,
        answer=win,
        value=str(best),
        rivals=[
            ("near_miss", f"{a}, another address", str(v))
            for a, v in zip(addrs, vals, strict=True)
            if a != win
        ],
        reads=reads,
        say=say,
        what=what,
        hint=hint,
        topic=f"our {site}s in {city}",
        number=False,
    )


def _ip(rng: random.Random) -> str:
    import ipaddress

    while True:
        ip = f"{rng.randrange(11, 223)}.{rng.randrange(0, 256)}.{rng.randrange(0, 256)}.{rng.randrange(1, 255)}"
        a = ipaddress.ip_address(ip)
        if not (a.is_private or a.is_reserved or a.is_loopback or a.is_multicast):
            return ip


def q_ip(b: Builder, info: Info, name: str) -> Question:
    for _ in range(30):
        ips = [_ip(b.rng) for _ in range(3)]
        cities = [_peek(b, info, [ip]).get("city") for ip in ips]
        if len(set(cities)) == 3 and all(cities):
            break
    else:
        raise PlantError("no three IPs in three cities")
    i = b.rng.randrange(3)

    def reads() -> None:
        for ip in ips:
            _ask(b, info, [ip])

    return Question(
        subject=b.say("Login alert", "Which login was that?", "Sign-in from three IPs"),
        ask=f"Security flagged sign-ins from {ips[0]}, {ips[1]} and {ips[2]}. The customer says only the one from "
        f"{cities[i]} was theirs. Which IP is that, going by {name}?",
        answer=ips[i],
        value=ips[i],
        rivals=[("near_miss", f"{ip}, another flagged IP", ip) for ip in ips if ip != ips[i]],
        reads=reads,
        say=f"The sign-in from {cities[i]} is {ips[i]}.",
        what="the IP in that city",
        hint=f"Look up the location of each IP in {name} and reply with the one in {cities[i]}.",
        topic="the flagged sign-ins",
        number=False,
        strict=True,
    )


def q_balance(b: Builder, info: Info, name: str) -> Question:
    d = _peek(b, info, [])
    bal, unit = float(d["balance"]), str(d.get("currency") or "USD")
    whole = unit == "sats"
    cost = round(bal * b.rng.uniform(0.2, 0.7), 0 if whole else 2)
    left = bal - cost
    fmt = (lambda x: str(int(round(x)))) if whole else _num
    if len({fmt(left), fmt(bal), fmt(cost), fmt(bal + cost)}) < 4:
        raise PlantError("no clear balance question")

    def reads() -> None:
        _ask(b, info, [])

    b.composed(fmt(left))
    return Question(
        subject=b.say("Balance after the payment", f"{name} balance", "Can we cover it?"),
        ask=f"Before I approve the {fmt(cost)} {unit} payment from our {name} account: what is the balance now, "
        "and how much would be left on it afterwards?",
        answer=fmt(left),
        value=fmt(left),
        rivals=[
            ("near_miss", "the payment added instead of taken off", fmt(bal + cost)),
            ("partial", "the payment itself", fmt(cost)),
        ],
        reads=reads,
        say=f"the balance is {fmt(bal)} {unit} now; after the {fmt(cost)} {unit} payment it would be "
        f"{fmt(left)} {unit}.",
        inputs=(fmt(bal),),
        what="the balance left",
        hint=f"Check the account balance in {name} and subtract the payment.",
        topic="our account balance",
    )


def q_usage(b: Builder, info: Info, name: str) -> Question:
    d = _peek(b, info, [])
    rem, limit = int(d["remaining"]), int(d["limit"])
    if rem < 20:
        raise PlantError("too little left to ask about")
    batch = b.rng.randrange(max(1, rem // 5), max(2, rem * 4 // 5))
    left = rem - batch
    if len({left, rem, limit - batch, batch, rem + batch}) < 5:
        raise PlantError("no clear usage question")

    # a storage plan counts in megabytes, an API plan in calls
    words = (info.tool["name"] + " " + str(info.tool.get("description", ""))).lower()
    unit = "MB" if re.search(r"space|storage|disk|quota of bytes", words) else "calls"

    def reads() -> None:
        _ask(b, info, [])

    b.composed(str(left))
    return Question(
        subject=b.say("API quota", f"{name} usage", "Room for the batch?"),
        ask=(
            f"I want to run a batch of {batch} calls against {name} this period. How many calls does our plan "
            "have left now, and how many after it?"
            if unit == "calls"
            else f"I want to upload {batch} MB to {name} this month. How much of our plan is left now (in MB), "
            "and how much after the upload?"
        ),
        answer=str(left),
        value=str(left),
        rivals=[
            ("near_miss", "the plan's limit minus the batch (ignores what is used)", str(limit - batch)),
            ("near_miss", "the batch added instead of taken off", str(rem + batch)),
        ],
        reads=reads,
        say=f"the plan has {rem} {unit} left now; after the {batch} {unit} it would have {left} {unit}.",
        inputs=(str(rem),),
        what="the calls left",
        hint=f"Check the plan's usage in {name} and subtract the batch from what remains.",
        topic="our API quota",
    )


QUESTIONS: dict[str, Callable[[Builder, Info, str], Question]] = {
    "weather": q_weather,
    "forecast": q_weather,
    "price": q_price,
    "price_history": q_price_history,
    "fx": q_fx,
    "geocode": q_geo,
    "directions": q_geo,
    "distance_matrix": q_geo,
    "elevation": q_geo,
    "ip_geolocation": q_ip,
    "balance": q_balance,
    "usage": q_usage,
}


def _read_today(b: Builder, who: Any, subject: str) -> dict[str, Any]:
    """The reference finds the colleague's email of today and reads it. A question is answered on the
    thread it came in, and the colleague's older mail is no candidate for it: the search shows only
    today's (so the audit's lazy solvers see no choice of email, only the lookups they skip)."""
    found = b.call(
        "email__gmail_search_emails", {"query": f"from:{who.first.lower()} newer_than:1d", "maxResults": 10}
    )
    msg = next(m for m in found["messages"] if m["subject"] == subject)
    b.call("email__gmail_read_email", {"messageId": msg["id"]})
    return msg


def info_question(b: Builder, info: Info) -> None:
    """A colleague's question the info tool answers: read it, look up each part, work it out, reply."""
    name = display(b.svc(info.service).manifest)
    who = _colleague(b)
    q = QUESTIONS[info.fn](b, info, name)
    subject = q.subject
    _mail(
        b,
        who,
        subject,
        f"Hi {b.me.first},\n\n{q.ask}\n\nThanks,\n{who.first}",
        hours_ago=b.rng.choice((1, 3, 6)),
    )
    b.fact(q.value, *([q.answer] if q.answer != q.value and q.number else []))
    b.begin()
    msg = _read_today(b, who, subject)
    q.reads()
    b.decide()
    _reply(b, who, msg, f"Hi {who.first},\n\n{q.say[:1].upper()}{q.say[1:]}\n\nBest,\n{b.me.first}")
    contains = ([q.value] if q.answer == q.value else [q.answer, q.value]) + list(q.inputs)
    # a figure the request itself states (the payment, the batch) is restated by an honest reply: no rival
    stated = [
        r
        for _, _, r in q.rivals
        if not q.strict and re.search(rf"(?<![\w.]){re.escape(r)}(?![\w]|\.\d)", q.ask)
    ]
    rivals = [r for _, _, r in q.rivals if r != q.value and r not in stated]
    b.expect_message(
        "email", who, contains=contains, description=f"{who.first} got {q.what} ({q.value})", exclude=rivals
    )
    for kind, desc, r in q.rivals:
        b.trap(kind, desc, swap={q.value: r}, answer=r)
        if r in rivals:
            b.not_written("email", r, f"{desc} ({r}) was not given as the answer")
    if b.rng.random() < 0.3:
        b.ask(q.value, kind="number" if q.number else "text", exclude=tuple(rivals), what=q.what)
    tail = ", then tell me the figure too" if b.answer is not None else ""
    b.write(
        frame(
            b.rng,
            b.say(
                f"answer {who.name}'s question about {q.topic} using {name}",
                f"work out what {who.first} asked about {q.topic} with {name} and reply to them",
                f"reply to {who.first}'s email about {q.topic}; {name} has the numbers",
            )
            + tail,
            context=b.say(f"{who.first} is waiting on it", f"{who.first}'s email has the details", ""),
        ),
        hint=f"Read {who.first}'s email. {q.hint} Reply on the thread.",
        subtasks=[f"Read {who.first}'s email", f"Look each one up in {name}", "Work out the answer", "Reply"],
    )


# ---- which services get it -------------------------------------------------------------------------
PROBES = 3


def probe_info(cls: Any, infos: tuple[Info, ...]) -> tuple[tuple[Info, ...], str | None]:
    """(the info tools whose question is planted and solved on a seeded copy of the service, the last
    cause where none is)."""
    from compoworld.core.company import make_company
    from compoworld.core.environment import Environment
    from compoworld.tasks.workflow import Unsolvable

    env = Environment.from_snapshot([cls.name, "email"], _probe_world(cls.name))
    s0 = env.snapshot()
    company = make_company(0, "small")
    stub = Family(
        f"compiled.{cls.name}.info_question", "project_management", (cls.name, "email"), lambda b: None
    )
    ok: list[Info] = []
    cause = None
    for info in infos:
        for seed in range(PROBES):
            env.restore(s0)
            b = Builder(env=env, rng=random.Random(seed), company=company, family=stub)
            try:
                info_question(b, info)
            except (PlantError, Unsolvable, ToolError, KeyError, ValueError, TypeError, IndexError) as e:
                cause = f"info_refused:{info.tool['name']}: {str(e)[:60]}"
                continue
            if b.instruction and b.s0 is not None:
                ok.append(info)
                break
    return tuple(ok), (None if ok else cause)


SUMMARY = "Answer a colleague's question from a compiled info service (two or more lookups and a comparison or a sum) by email."


def info_builder(choices: tuple[Info, ...]) -> Callable[[Builder], None]:
    def build(b: Builder) -> None:
        info_question(b, b.pick(choices))

    return build

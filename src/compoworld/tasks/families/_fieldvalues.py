"""Values that fit a compiled record's field, by the field's name, type and enum.

A compiled resource has fields named by its spec (`dietary_preference`, `invoice_number`,
`billing_email`, `headcount`). A task that asks for one plants a value a person would expect there:
the field's enum if it has one; money for amount and price fields; a count for quantities; a date
for date fields; an address, a phone, a URL or a person's name where the name says so; a short
phrase from a compact vocabulary for common text fields (dietary preference -> "vegetarian",
department -> "Finance"); a code shaped like the thing it numbers (INV-20417, SKU-30952). A field
with none of these (`foo`, `rate`, `score`, `notes`) gets no value: it is not asked for.

The name is read by its words (`dietaryPreference` -> dietary, preference), so a short word is not
found inside another (the `ref` in `preference`).
"""

from __future__ import annotations

import random
import re
from datetime import date, datetime, timedelta
from typing import Any

# a phrase vocabulary: the field's words that select it -> values (each at least four characters, so
# a reply that quotes one can be traced, and a decoy's value swapped in, by the adversaries)
PHRASES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (
        ("dietary", "diet", "meal"),
        ("vegetarian", "vegan", "gluten-free", "halal", "kosher", "pescatarian", "dairy-free"),
    ),
    (
        ("department", "dept", "division", "team"),
        ("Finance", "Engineering", "Marketing", "Operations", "Legal", "Customer Success", "Procurement"),
    ),
    (
        ("industry", "sector", "vertical"),
        ("Healthcare", "Retail", "Logistics", "Manufacturing", "Financial services", "Education", "Energy"),
    ),
    (
        ("jobtitle", "position", "role", "occupation", "designation"),
        (
            "Account Executive",
            "Product Manager",
            "Data Analyst",
            "Office Manager",
            "Software Engineer",
            "Finance Controller",
            "Support Lead",
        ),
    ),
    (("priority", "urgency", "severity"), ("medium", "high", "urgent", "critical")),
    (("tier", "plan", "subscription", "edition"), ("Starter", "Growth", "Business", "Enterprise", "Premium")),
    (
        ("source", "referral", "origin", "acquisition"),
        ("Referral", "Website", "Trade show", "Webinar", "Partner", "Cold outreach"),
    ),
    (("color", "colour"), ("teal", "orange", "purple", "navy", "crimson", "olive", "amber")),
    (("region", "territory"), ("EMEA", "APAC", "North America", "LATAM", "DACH", "Nordics")),
    (("language", "locale"), ("English", "German", "French", "Spanish", "Japanese", "Portuguese")),
    (
        ("timezone", "tz"),
        (
            "Europe/Berlin",
            "America/New_York",
            "Asia/Tokyo",
            "Europe/London",
            "America/Chicago",
            "Australia/Sydney",
        ),
    ),
    (
        ("country", "nationality"),
        ("Germany", "France", "Japan", "Canada", "Brazil", "Australia", "Spain", "Netherlands"),
    ),
    (
        ("city", "town", "hometown"),
        ("Berlin", "Lisbon", "Toronto", "Osaka", "Denver", "Melbourne", "Dublin", "Austin"),
    ),
    (
        ("frequency", "cadence", "interval", "cycle", "recurrence"),
        ("weekly", "biweekly", "monthly", "quarterly", "yearly"),
    ),
    (("carrier", "courier"), ("FedEx", "USPS", "Royal Mail", "La Poste", "Deutsche Post")),
    (("terms", "paymentterms"), ("Net 15", "Net 30", "Net 45", "Net 60", "Due on receipt")),
    # a template's, a document's or an expense's category: the business area it belongs to
    (("category",), ("Finance", "Sales", "Operations", "Marketing", "Legal", "Human Resources")),
    (("namespace",), ("production", "staging", "monitoring", "payments", "analytics")),
    # a record's note or description: the short working note a person writes there and asks about
    (
        ("description", "desc", "notes", "note", "remarks", "memo", "comments"),
        # (words an instruction never uses, so no keyword match singles out the record holding one)
        (
            "Quotes in Swiss francs",
            "Pallets ship via Rotterdam",
            "Prefers Tuesday mornings",
            "Badge access at gate 4",
            "Vegetarian catering",
            "Invoices go in euros",
            "Parking on level minus 2",
        ),
    ),
    # what a page, a cell or a snippet holds: one short line of working text
    (
        ("content", "text"),
        (
            "Offsite agenda draft",
            "Q3 close checklist",
            "Vendor meeting minutes",
            "Onboarding welcome letter",
            "Key rotation runbook",
            "Pricing workshop outcomes",
        ),
    ),
    # the organisation a person works for
    (
        ("company", "employer", "organization", "organisation", "companyname"),
        ("Northwind Traders", "Globex Logistics", "Brightwater Health", "Kestrel Analytics", "Lumen Foods"),
    ),
    (("version", "release"), ("2.4.1", "3.0.2", "1.8.5", "4.1.0", "5.2.3")),
    (
        ("projectname",),
        ("Website relaunch", "Data migration", "Mobile app", "Billing revamp", "Partner portal"),
    ),
)
REPOS = ("billing-service", "web-app", "data-pipeline", "mobile-client", "auth-gateway", "docs-site")
# where a person or an office is ("location" alone; an `artifact_location` is a path, not a city)
PLACES = ("location", "officelocation", "worklocation", "homelocation", "office", "baselocation")
MIN_LEN = 4  # shorter text values cannot be told apart inside a reply
PEOPLE = (
    "owner",
    "assignee",
    "manager",
    "reviewer",
    "approver",
    "recruiter",
    "author",
    "reporter",
    "salesrep",
    "rep",
    "coordinator",
    "sponsor",
    "champion",
    "contactname",
    "contactperson",
    "accountmanager",
)
MONEY = ("amount", "price", "cost", "total", "subtotal", "budget", "fee", "balance", "revenue", "spend")
MONEY += ("deposit", "payment", "salary", "wage", "compensation", "arr", "mrr", "value", "worth")
COUNTS = ("quantity", "qty", "units", "stock", "inventory", "capacity", "seats", "licenses", "headcount")
COUNTS += ("followers", "subscribers", "views", "impressions", "visits", "pageviews", "downloads")
DATES = ("date", "deadline", "due", "dueon", "dueat", "duedate", "expiry", "expires", "renewal")
PAST = ("hire", "hired", "joined", "signed", "since", "opened", "founded", "onboarded")
NEVER = ("birth", "dob", "birthday", "age", "created", "updated", "modified", "deleted", "last")
# what a code numbers -> its prefix (the first of the field's words that names one)
CODES = {
    "invoice": "INV",
    "sku": "SKU",
    "po": "PO",
    "purchase": "PO",
    "order": "ORD",
    "serial": "SN",
    "ticket": "TCK",
    "case": "CASE",
    "contract": "CTR",
    "policy": "POL",
    "quote": "QT",
    "license": "LIC",
    "licence": "LIC",
    "batch": "LOT",
    "lot": "LOT",
    "employee": "EMP",
    "booking": "BK",
    "reservation": "RES",
    "shipment": "SHP",
    "account": "ACC",
    "registration": "REG",
    "reference": "REF",
    "ref": "REF",
    "receipt": "RCT",
    "claim": "CLM",
    "project": "PRJ",
    "asset": "AST",
}
CODE_WORDS = ("number", "no", "num", "code", "ref", "reference", "sku", "serial", "identifier")
PROMOS = ("SPRING25", "WELCOME10", "VIP20", "SUMMER15", "LOYAL30", "FALL10", "EARLY20")


CITY = next(i for i, (keys, _) in enumerate(PHRASES) if "city" in keys)


def name_words(field: str) -> list[str]:
    """`dietaryPreference`, `dietary_preference` -> ["dietary", "preference"]; a run of capitals is
    one word (`SKU`, `poNumber` -> ["po", "number"])."""
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", field)
    s = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", " ", s)
    return [w for w in re.split(r"[^A-Za-z0-9]+", s.lower()) if w]


def kind_of(field: str, jtype: str, enum: tuple[Any, ...] | None = None) -> str | None:
    """The kind of value `field` holds ("enum", "money", "count", "date", "past_date", "email",
    "phone", "url", "repo", "website", "person", "phrase:<i>", "code:<PREFIX>", "promo", "postal", "hex"),
    or None where no plausible value can be planted."""
    w = name_words(field)
    joined = "".join(w)
    if not w or joined in ("id", "key") or w[-1] in ("id", "ids", "uuid", "gid", "key"):
        return None
    if any(x in w for x in NEVER) or joined.startswith(("created", "updated", "modified", "deleted")):
        return None
    if enum:
        vals = [v for v in enum if isinstance(v, str) and len(v) >= MIN_LEN]
        return "enum" if len(vals) >= 2 else None
    if jtype in ("integer", "number"):
        if any(x in w for x in MONEY) or joined in MONEY:
            return "money"
        if any(x in w for x in COUNTS) or joined in COUNTS:
            return "count"
        return None
    if jtype not in ("string", "any"):
        return None
    if "email" in joined:
        return "email"
    if "phone" in joined or "mobile" in w or "fax" in w or joined in ("tel", "telephone"):
        return "phone"
    if "website" in joined or "homepage" in joined or w[-1] == "domain":
        return "website"
    if w[-1] in ("url", "uri", "link", "href") or joined.endswith("url"):
        return "repo" if any(x in w for x in ("repository", "repo", "git")) else "url"
    if joined in PLACES:
        return f"phrase:{CITY}"
    if any(x in w for x in ("zip", "postal", "postcode", "zipcode")):
        return "postal"
    if ("color" in w and "code" in w) or "hex" in w:
        return "hex"
    if any(x in w for x in ("promo", "coupon", "discount", "voucher")) and (
        "code" in w or w[-1] in ("promo", "coupon", "voucher")
    ):
        return "promo"
    if any(x in w for x in PAST) and ("date" in w or "at" in w or "on" in w or len(w) == 1):
        return "past_date"
    if any(x in w for x in DATES) or joined.endswith(("dueat", "startat", "endat", "startsat", "endsat")):
        return "date"
    named = joined.endswith("name") and any(x in w for x in ("contact", "owner", "manager", "assignee"))
    if joined in PEOPLE or w[-1] in PEOPLE or named:
        return "person"
    for i, (keys, _vals) in enumerate(PHRASES):
        if any(k in w for k in keys) or joined in keys:
            return f"phrase:{i}"
    if any(x in w for x in CODE_WORDS):
        prefix = next((CODES[x] for x in w if x in CODES), None)
        return f"code:{prefix}" if prefix else None
    return None


def draw(
    kind: str,
    jtype: str,
    rng: random.Random,
    today: date,
    people: list[Any],
    domains: list[str],
    enum: tuple[Any, ...] | None = None,
) -> Any:
    """One value of `kind` (see `kind_of`), typed for a field of JSON type `jtype`."""
    if kind == "enum":
        return rng.choice([v for v in enum or () if isinstance(v, str) and len(v) >= MIN_LEN])
    if kind == "money":
        if jtype == "integer":
            return rng.randrange(12, 480) * 100
        return round(rng.randrange(120, 48000) + rng.choice((0.25, 0.75)), 2)  # two decimals, as written
    if kind == "count":
        return rng.randrange(1200, 9800)  # four digits: a value the transcript can trace
    if kind == "date":
        return (today + timedelta(days=rng.randrange(3, 90))).isoformat()
    if kind == "past_date":
        return (today - timedelta(days=rng.randrange(30, 900))).isoformat()
    if kind == "email":
        return rng.choice(people).email
    if kind == "phone":
        return rng.choice(people).phone
    if kind == "website":
        return f"https://www.{rng.choice(domains)}"
    if kind == "repo":
        return f"https://github.com/{rng.choice(domains).split('.')[0]}/{rng.choice(REPOS)}"
    if kind == "url":
        page = rng.choice(("pricing", "docs", "status", "careers", "blog", "support", "events"))
        return f"https://{rng.choice(domains)}/{page}/{rng.randrange(100, 999)}"
    if kind == "person":
        return rng.choice(people).name
    if kind == "postal":
        return f"{rng.randrange(10000, 99999)}"
    if kind == "hex":
        return "#" + "".join(rng.choice("0123456789abcdef") for _ in range(6))
    if kind == "promo":
        return rng.choice(PROMOS)
    if kind.startswith("phrase:"):
        return rng.choice(PHRASES[int(kind.split(":")[1])][1])
    if kind.startswith("code:"):
        return f"{kind.split(':')[1]}-{rng.randrange(10000, 99999)}"
    raise ValueError(f"unknown field kind {kind!r}")


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")
_PHONE = re.compile(r"^\+?[\d ()-]{7,}$")


def fits(field: str, jtype: str, value: Any, enum: tuple[Any, ...] | None = None) -> bool:
    """Whether `value` reads as a value of `field` (what `draw` makes for it, in any draw)."""
    kind = kind_of(field, jtype, enum)
    if kind is None:
        return False
    s = str(value)
    if kind == "enum":
        return value in (enum or ())
    if kind in ("money", "count"):
        return isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    if kind in ("date", "past_date"):
        if not _ISO_DATE.match(s):
            return False
        datetime.strptime(s, "%Y-%m-%d")
        return True
    if kind == "email":
        return bool(_EMAIL.match(s))
    if kind == "phone":
        return bool(_PHONE.match(s)) and sum(ch.isdigit() for ch in s) >= 7
    if kind in ("url", "website", "repo"):
        return s.startswith("https://") and " " not in s
    if kind == "person":
        return len(s.split()) >= 2 and all(p[:1].isupper() for p in s.split())
    if kind == "postal":
        return s.isdigit() and len(s) == 5
    if kind == "hex":
        return bool(re.fullmatch(r"#[0-9a-f]{6}", s))
    if kind == "promo":
        return s in PROMOS
    if kind.startswith("phrase:"):
        return s in PHRASES[int(kind.split(":")[1])][1]
    return bool(re.fullmatch(re.escape(kind.split(":")[1]) + r"-\d{5}", s))

"""The shared company that every service of an environment seeds its data from.

One seeded company (people, teams, customers and their contacts, products) so that the person who
emails you is also in the CRM, the calendar and the HR system, with the same name, email and id.
Names come from fixed lists, not Faker: Faker's seeded output changes between its releases, and our
tasks must be byte-identical on every machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from compoworld.core.clock import derive_rng

FIRST = [
    "Alice",
    "Aaron",
    "Priya",
    "Marcus",
    "Elena",
    "Tomas",
    "Grace",
    "Kenji",
    "Sofia",
    "Daniel",
    "Amara",
    "Lucas",
    "Hannah",
    "Omar",
    "Chloe",
    "Mateo",
    "Nadia",
    "Ethan",
    "Ingrid",
    "Rafael",
    "Zoe",
    "Victor",
    "Leila",
    "Samuel",
    "Maya",
    "Andre",
    "Ruth",
    "Felix",
    "Clara",
    "Hugo",
    "Irene",
    "Jonah",
    "Yara",
    "Oscar",
    "Mei",
    "Caleb",
    "Ava",
    "Dmitri",
    "Nora",
    "Isaac",
    "Lina",
    "Pablo",
    "Tessa",
    "Arjun",
    "Freya",
    "Malik",
    "Julia",
    "Theo",
    "Esther",
    "Ravi",
    "Lucia",
    "Noah",
    "Sara",
    "Kofi",
    "Emma",
    "Diego",
    "Anya",
    "Liam",
    "Farah",
    "Jon",
    "John",
    "Ana",
    "Anna",
    "Eric",
    "Erik",
    "Mark",
    "Marc",
]
LAST = [
    "Nguyen",
    "Patel",
    "Okafor",
    "Schmidt",
    "Rossi",
    "Tanaka",
    "Johansson",
    "Garcia",
    "Kowalski",
    "Haddad",
    "Silva",
    "Murphy",
    "Cohen",
    "Dubois",
    "Larsen",
    "Novak",
    "Fernandes",
    "Kim",
    "Osei",
    "Brennan",
    "Moreau",
    "Varga",
    "Hughes",
    "Ibrahim",
    "Lindqvist",
    "Costa",
    "Reyes",
    "Sato",
    "Mensah",
    "Fischer",
    "Walsh",
    "Romero",
    "Petrov",
    "Baker",
    "Ortiz",
    "Hansen",
    "Chen",
    "Singh",
    "Adeyemi",
    "Keller",
    "Smith",
    "Smyth",
    "Meyer",
    "Meier",
    "Becker",
    "Jensen",
    "Park",
    "Lee",
    "Morales",
    "Campbell",
]
TEAMS = (
    ("Sales", "sales"),
    ("Customer Success", "success"),
    ("Engineering", "eng"),
    ("Finance", "finance"),
    ("Marketing", "marketing"),
    ("People Ops", "people"),
    ("Operations", "ops"),
    ("Product", "product"),
)
TITLES = {
    "Sales": ("Account Executive", "Sales Development Rep", "Sales Manager"),
    "Customer Success": ("Customer Success Manager", "Support Engineer", "Support Lead"),
    "Engineering": ("Software Engineer", "Senior Engineer", "Engineering Manager", "SRE"),
    "Finance": ("Accountant", "Finance Manager", "Billing Specialist"),
    "Marketing": ("Marketing Manager", "Content Strategist", "Growth Analyst"),
    "People Ops": ("HR Generalist", "Recruiter", "People Partner"),
    "Operations": ("Operations Analyst", "Office Manager", "Procurement Lead"),
    "Product": ("Product Manager", "Product Designer", "UX Researcher"),
}
LOCATIONS = (
    ("Berlin", "Europe/Berlin"),
    ("London", "Europe/London"),
    ("New York", "America/New_York"),
    ("San Francisco", "America/Los_Angeles"),
    ("Toronto", "America/Toronto"),
    ("Singapore", "Asia/Singapore"),
)
CUSTOMER_A = [
    "Acme",
    "Blue",
    "Northwind",
    "Globex",
    "Initech",
    "Umbrella",
    "Stark",
    "Wayne",
    "Hooli",
    "Vandelay",
    "Soylent",
    "Tyrell",
    "Cyberdyne",
    "Wonka",
    "Oscorp",
    "Gringotts",
    "Aperture",
    "Monarch",
    "Pied",
    "Zenith",
    "Nimbus",
    "Orion",
    "Helix",
    "Summit",
    "Harbor",
    "Cobalt",
    "Evergreen",
    "Redwood",
    "Atlas",
    "Beacon",
    "Quantum",
    "Polar",
    "Crescent",
    "Falcon",
    "Granite",
    "Lumen",
    "Meridian",
    "Sterling",
]
CUSTOMER_B = [
    "Labs",
    "Logistics",
    "Foods",
    "Health",
    "Robotics",
    "Energy",
    "Retail",
    "Media",
    "Analytics",
    "Capital",
    "Systems",
    "Motors",
]
INDUSTRIES = (
    "Software",
    "Logistics",
    "Food & Beverage",
    "Healthcare",
    "Manufacturing",
    "Energy",
    "Retail",
    "Media",
    "Financial Services",
    "Education",
)
PRODUCT_LINES = (
    ("Analytics Suite", "Software", 1200.0),
    ("Data Connector", "Software", 350.0),
    ("Support Plan Gold", "Services", 800.0),
    ("Support Plan Silver", "Services", 400.0),
    ("Onboarding Package", "Services", 1500.0),
    ("Edge Sensor", "Hardware", 89.0),
    ("Edge Gateway", "Hardware", 420.0),
    ("Training Workshop", "Services", 950.0),
    ("API Add-on", "Software", 150.0),
    ("Storage Pack 1TB", "Software", 60.0),
    ("Security Module", "Software", 700.0),
    ("Dashboard Seat", "Software", 45.0),
)
SIZES = {"small": (12, 6, 8), "default": (48, 30, 24), "large": (200, 120, 60)}


@dataclass(frozen=True)
class Person:
    id: str
    first: str
    last: str
    email: str
    title: str
    team: str
    phone: str
    location: str
    timezone: str
    manager_id: str | None = None
    company_id: str | None = None  # None for employees, a customer id for external contacts

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"


@dataclass(frozen=True)
class Team:
    id: str
    name: str
    slug: str
    lead_id: str
    member_ids: tuple[str, ...]


@dataclass(frozen=True)
class Customer:
    id: str
    name: str
    domain: str
    industry: str
    city: str
    tier: str
    contact_ids: tuple[str, ...]


@dataclass(frozen=True)
class Product:
    id: str
    sku: str
    name: str
    category: str
    price: float


@dataclass(frozen=True)
class Company:
    """An immutable, seeded organisation; services take what they need from it."""

    seed: int
    size: str
    name: str
    domain: str
    me: Person
    employees: tuple[Person, ...]
    teams: tuple[Team, ...]
    customers: tuple[Customer, ...]
    contacts: tuple[Person, ...]
    products: tuple[Product, ...]

    def person(self, pid: str) -> Person:
        return self._people[pid]

    @cached_property
    def _people(self) -> dict[str, Person]:
        return {p.id: p for p in (*self.employees, *self.contacts)}

    @property
    def people(self) -> tuple[Person, ...]:
        return (*self.employees, *self.contacts)

    def customer(self, cid: str) -> Customer:
        return next(c for c in self.customers if c.id == cid)


def _unique_names(rng, n: int, taken: set[tuple[str, str]]) -> list[tuple[str, str]]:
    out = []
    while len(out) < n:
        pair = (rng.choice(FIRST), rng.choice(LAST))
        if pair not in taken:
            taken.add(pair)
            out.append(pair)
    return out


@lru_cache(maxsize=32)
def make_company(seed: int = 0, size: str = "default") -> Company:
    """The company of an environment. Pure and cached: the result is immutable."""
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}: expected one of {', '.join(SIZES)}")
    rng = derive_rng(seed, "company")
    n_emp, n_cust, n_prod = SIZES[size]
    cname = rng.choice(("Lumina", "Northstar", "Brightpath", "Keystone", "Tidewater", "Ardent"))
    suffix = rng.choice(("Labs", "Systems", "Works", "Group"))
    domain = f"{cname.lower()}{suffix.lower()}.com"
    taken: set[tuple[str, str]] = set()
    names = _unique_names(rng, n_emp, taken)
    emails: set[str] = set()

    def email_for(first: str, last: str, dom: str) -> str:
        base = f"{first}.{last}".lower()
        addr, i = f"{base}@{dom}", 2
        while addr in emails:
            addr, i = f"{base}{i}@{dom}", i + 1
        emails.add(addr)
        return addr

    employees: list[Person] = []
    for i, (first, last) in enumerate(names):
        team = TEAMS[i % len(TEAMS)][0]
        loc, tz = LOCATIONS[rng.randrange(len(LOCATIONS))]
        employees.append(
            Person(
                id=f"E{1001 + i}",
                first=first,
                last=last,
                email=email_for(first, last, domain),
                title=rng.choice(TITLES[team]),
                team=team,
                phone=f"+1-555-{rng.randrange(100, 999)}-{rng.randrange(1000, 9999)}",
                location=loc,
                timezone=tz,
            )
        )
    teams: list[Team] = []
    by_team: dict[str, list[Person]] = {}
    for p in employees:
        by_team.setdefault(p.team, []).append(p)
    final: dict[str, Person] = {p.id: p for p in employees}
    for ti, (tname, slug) in enumerate(TEAMS):
        members = by_team.get(tname, [])
        if not members:
            continue
        lead = members[0]
        for m in members[1:]:
            final[m.id] = Person(**{**m.__dict__, "manager_id": lead.id})
        teams.append(Team(f"T{ti + 1:02d}", tname, slug, lead.id, tuple(m.id for m in members)))
    employees = [final[p.id] for p in employees]
    me = employees[rng.randrange(1, len(employees))]

    customers: list[Customer] = []
    contacts: list[Person] = []
    cnames: set[str] = set()
    per_customer = 2 if size == "small" else 3
    for i in range(n_cust):
        while True:
            cn = f"{rng.choice(CUSTOMER_A)} {rng.choice(CUSTOMER_B)}"
            if cn not in cnames:
                cnames.add(cn)
                break
        cdom = cn.lower().replace(" ", "") + ".example"
        cid = f"C{2001 + i}"
        ids = []
        for first, last in _unique_names(rng, per_customer, taken):
            pid = f"X{3001 + len(contacts)}"
            contacts.append(
                Person(
                    id=pid,
                    first=first,
                    last=last,
                    email=email_for(first, last, cdom),
                    title=rng.choice(
                        ("CTO", "VP Operations", "Procurement Manager", "Head of IT", "CFO", "Buyer")
                    ),
                    team="external",
                    phone=f"+1-555-{rng.randrange(100, 999)}-{rng.randrange(1000, 9999)}",
                    location=rng.choice(LOCATIONS)[0],
                    timezone="UTC",
                    company_id=cid,
                )
            )
            ids.append(pid)
        customers.append(
            Customer(
                id=cid,
                name=cn,
                domain=cdom,
                industry=rng.choice(INDUSTRIES),
                city=rng.choice(LOCATIONS)[0],
                tier=rng.choice(("enterprise", "mid-market", "smb")),
                contact_ids=tuple(ids),
            )
        )
    products = []
    for i in range(n_prod):
        base, cat, price = PRODUCT_LINES[i % len(PRODUCT_LINES)]
        edition = "" if i < len(PRODUCT_LINES) else f" v{i // len(PRODUCT_LINES) + 1}"
        products.append(
            Product(
                f"PR{4001 + i}",
                f"SKU-{4001 + i}",
                base + edition,
                cat,
                round(price * (1 + 0.1 * (i // 12)), 2),
            )
        )
    return Company(
        seed=seed,
        size=size,
        name=f"{cname} {suffix}",
        domain=domain,
        me=me,
        employees=tuple(employees),
        teams=tuple(teams),
        customers=tuple(customers),
        contacts=tuple(contacts),
        products=tuple(products),
    )

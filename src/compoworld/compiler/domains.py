"""The domain of a compiled service, from its corpus spec.

Every corpus spec names its domain (`"domain": "file storage"`, `"payments/accounting"`, ...; see
`../shared/mcp-specs/README.md`). A compiled service gets two names from it:
- its *service domain*, in the library's own vocabulary (the `domain` of the hand-built services:
  `crm`, `support`, `communication`, `files`, ...), shown by `compoworld services`;
- its *work domain*, one of the task generator's `DOMAINS` (`sales`, `finance`, ...), the kind of work
  its workflow tasks are (`tasks.families.compiled`).

Broad corpus domains ("productivity/other", "search/web/info", "messaging") are narrowed by words in
the server's name and registry description; the mapping is a pure function of the manifest.
"""

from __future__ import annotations

import re
from typing import Any

# corpus domain (lower-case, spaces around '/' removed) -> (service domain, work domain)
CORPUS: dict[str, tuple[str, str]] = {
    "crm": ("crm", "sales"),
    "customer support": ("support", "support"),
    "email": ("communication", "support"),
    "messaging": ("communication", "support"),
    "calendar": ("scheduling", "scheduling"),
    "calendar/meetings": ("scheduling", "scheduling"),
    "calendar/scheduling": ("scheduling", "scheduling"),
    "scheduling": ("scheduling", "scheduling"),
    "project management": ("project_management", "project_management"),
    "issue tracking": ("issue_tracking", "engineering"),
    "code hosting/issue tracking": ("code", "engineering"),
    "code hosting/devops": ("code", "engineering"),
    "docs/wiki": ("docs", "docs_compliance"),
    "file storage": ("files", "docs_compliance"),
    "spreadsheets": ("spreadsheets", "data_reporting"),
    "spreadsheets/database": ("database", "data_reporting"),
    "database": ("database", "data_reporting"),
    "database/spreadsheet": ("database", "data_reporting"),
    "database/kv": ("database", "data_reporting"),
    "analytics": ("analytics", "data_reporting"),
    "payments": ("payments", "finance"),
    "payments/accounting": ("payments", "finance"),
    "e-commerce": ("ecommerce", "ecommerce"),
    "marketing": ("marketing", "marketing"),
    "hr": ("hr", "hr"),
    "cloud/infra": ("infra", "it_admin"),
    "search/web/info": ("web", "data_reporting"),
    "media/design": ("media", "marketing"),
    "productivity/other": ("productivity", "project_management"),
}
# words in a server's name or description that say which work it serves (first match wins)
HINTS: tuple[tuple[str, str], ...] = (
    (r"recruit|applicant|candidate|hiring|\bats\b|greenhouse|lever|job board", "recruiting"),
    (r"\bhris\b|payroll|employee|bamboo|personio", "hr"),
    (r"invoice|accounting|billing|payment|ledger|expense|bank|tax", "finance"),
    (r"\bcrm\b|\blead|deal|pipeline|sales", "sales"),
    (r"helpdesk|ticket|support desk|customer support|zendesk|freshdesk", "support"),
    (r"campaign|newsletter|marketing|audience|social media|\bads?\b", "marketing"),
    (r"shop|store|order|cart|product catalog|commerce|inventory", "ecommerce"),
    (r"calendar|meeting|booking|appointment|schedul", "scheduling"),
    (r"task|project|kanban|todo|time track|clockify", "project_management"),
    (r"\bdocs?\b|wiki|notes?\b|knowledge|document", "docs_compliance"),
    (r"github|gitlab|ci/cd|build|deploy|repositor|devops", "engineering"),
    (r"cloud|cluster|kubernetes|server|dns|network|identity|iam|keycloak|vault", "it_admin"),
    (r"analytics|report|metric|dashboard|sql|database|data", "data_reporting"),
)
BROAD = {"productivity/other", "search/web/info", "messaging", "email", "media/design", "cloud/infra"}


def _key(domain: str) -> str:
    return re.sub(r"\s*/\s*", "/", (domain or "").strip().lower())


def domains_of(manifest: dict[str, Any], description: str = "") -> tuple[str, str]:
    """(service domain, work domain) of a compiled service's manifest."""
    key = _key(str(manifest.get("domain") or ""))
    service, work = CORPUS.get(key, ("", ""))
    if not service or key in BROAD:
        text = " ".join(
            str(x) for x in (manifest.get("service"), manifest.get("server"), description) if x
        ).lower()
        for rx, w in HINTS:
            if re.search(rx, text):
                work = w
                break
    return service or key.replace(" ", "_").replace("/", "_") or "compiled", work or "project_management"


def assign(cls: Any) -> Any:
    """Give a compiled service class its domains: `domain` (service), `work_domain`, and the
    corpus's own words in `corpus_domain`."""
    manifest = getattr(cls, "manifest", {}) or {}
    cls.corpus_domain = manifest.get("domain") or ""
    cls.domain, cls.work_domain = domains_of(manifest)
    return cls


def product_of(cls: Any) -> str | None:
    """The product a service models, by the spec file it comes from (`klavis_jira.json` -> `jira`,
    `docker_stripe.json` and `stripe-official.json` -> `stripe`): a compiled service and a hand-built
    one of the same product have the same tools, so they never sit in one environment."""
    from compoworld.compiler.compiler import SOURCE_WORDS, TLD_WORDS, tokens

    spec = getattr(cls, "spec", None)
    if not isinstance(spec, str) or not spec:
        return None
    stem = re.sub(r"\.json$", "", spec.replace("\\", "/").rsplit("/", 1)[-1].rsplit(":", 1)[-1])
    words = [t for t in tokens(re.sub(r"\(.*?\)", "", stem)) if t not in SOURCE_WORDS and t not in TLD_WORDS]
    return "_".join(words) or None


def apart(chosen: list[str] | tuple[str, ...], pool: list[str], library: dict[str, Any]) -> list[str]:
    """The services of `pool` (not in `chosen`) that can join `chosen`: none models a product that a
    chosen service (or an earlier one of `pool` kept) already models."""
    taken = {p for s in chosen if s in library and (p := product_of(library[s]))}
    out = []
    for s in pool:
        if s in chosen:
            continue
        p = product_of(library[s]) if s in library else None
        if p is not None and p in taken:
            continue
        if p is not None:
            taken.add(p)
        out.append(s)
    return out

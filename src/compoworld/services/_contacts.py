"""Google-style contact search shared by the email and calendar services (same real API)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from compoworld.core.company import Company
from compoworld.core.envelope import InvalidArguments
from compoworld.core.query import check_limit, matches, paginate


class Contact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    resourceName: str
    name: str
    email: str
    phone: str
    organization: str
    title: str
    type: str  # personal | other | directory


def seed_contacts(company: Company, rng: Any) -> list[dict[str, Any]]:
    """Directory = colleagues; personal = customer contacts the user saved; other = the rest."""
    out = []
    for p in company.employees:
        if p.id != company.me.id:
            out.append(_contact(p, company.name, "directory"))
    for p in company.contacts:
        org = company.customer(p.company_id).name if p.company_id else ""
        out.append(_contact(p, org, "personal" if rng.random() < 0.7 else "other"))
    return out


def _contact(p: Any, org: str, kind: str) -> dict[str, Any]:
    return {
        "id": p.id,
        "resourceName": f"people/{p.id}",
        "name": p.name,
        "email": p.email,
        "phone": p.phone,
        "organization": org,
        "title": p.title,
        "type": kind,
    }


def search_contacts(
    contacts: dict[str, Any],
    query: str,
    contact_type: str,
    page_size: int,
    page_token: str | None,
    sources: str,
) -> dict[str, Any]:
    if not query.strip():
        raise InvalidArguments("'query' must not be empty: give part of a name, email or organization")
    if contact_type == "directory":
        check_limit(page_size, "pageSize", 1, 500)
    else:
        check_limit(page_size, "pageSize", 1, 30)
    kinds = ("personal", "other", "directory") if contact_type == "all" else (contact_type,)
    if sources == "DOMAIN_CONTACTS" and "directory" in kinds:
        kinds = tuple(k for k in kinds if k != "directory") + ("directory",)
    result: dict[str, Any] = {}
    for kind in kinds:
        hits = [
            c
            for c in contacts.values()
            if c["type"] == kind and matches(query, c["name"], c["email"], c["organization"], c["phone"])
        ]
        hits.sort(key=lambda c: (c["name"], c["id"]))
        page, nxt = paginate(hits, page_token, page_size, "pageToken")
        result[kind] = {
            "results": [
                {k: c[k] for k in ("resourceName", "name", "email", "phone", "organization", "title")}
                for c in page
            ],
            "totalSize": len(hits),
            "nextPageToken": nxt,
        }
    return result if contact_type == "all" else result[contact_type]

"""Compiled services get their domains from the corpus's own words, narrowed by name where broad."""

from __future__ import annotations

from compoworld.compiler.domains import domains_of
from compoworld.tasks.workflow import DOMAINS


def test_corpus_domains_map_to_library_and_work_domains() -> None:
    assert domains_of({"domain": "customer support"}) == ("support", "support")
    assert domains_of({"domain": "Payments / Accounting"}) == ("payments", "finance")
    assert domains_of({"domain": "CRM"}) == ("crm", "sales")


def test_broad_domains_are_narrowed_by_the_server_name() -> None:
    assert domains_of({"domain": "productivity/other", "server": "Clockify time tracking"})[1] == (
        "project_management"
    )
    assert domains_of({"domain": "messaging", "server": "Newsletter campaigns"})[1] == "marketing"
    assert domains_of({"domain": "search/web/info", "server": "Greenhouse job board"})[1] == "recruiting"


def test_every_domain_is_a_work_domain_even_when_unknown() -> None:
    for d in ("", "something new", "cloud/infra", "media/design"):
        assert domains_of({"domain": d, "service": "x"})[1] in DOMAINS

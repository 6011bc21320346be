"""Questions to compiled info tools (`tasks/families/compiled_info.py`): a colleague asks what the seeded
provider answers (the warmest of three cities, the cheaper quote in USD, the closer depot, what the
balance leaves), the agent looks each part up and replies; the tasks pass every gate, a reply in other
words passes, the near misses (the other city, the other quote, the balance before the payment) fail,
and the concept applies only where an info tool takes the question's inputs."""

from __future__ import annotations

import pytest

from tests.tasks.compiled_library import SPECS, compiled_library

CORPUS = {  # one service per provider class: weather and forecast, prices, fx, places, IPs, balance, usage
    "corpus/openmcp_korea-weather.json": "korea_weather",
    "corpus/klavis_coinbase.json": "coinbase",
    "corpus/docker_lightning-enable.json": "lightning_enable",
    "corpus/klavis_google_maps.json": "google_maps",
    "corpus/docker_robtex.json": "robtex",
    "corpus/docker_breez-sdk.json": "breez_sdk",
    "corpus/klavis_openrouter.json": "openrouter",
}


def _obj(props: dict, required: list[str] | None = None) -> dict:
    return {"type": "object", "properties": props, **({"required": required} if required else {})}


S = {"type": "string"}
# held-out shapes written here, not in the corpus: a market-data server and a status-only server
MARKET = {
    "server": "Tickerline (test fixture)",
    "domain": "finance",
    "tools": [
        {
            "name": "get_stock_price",
            "description": "Latest quote for a ticker symbol.",
            "inputSchema": _obj({"ticker": S}, ["ticker"]),
        },
        {
            "name": "get_weather",
            "description": "Current weather at a city.",
            "inputSchema": _obj({"city": S}, ["city"]),
        },
    ],
}
STATUS_ONLY = {
    "server": "Pinger (test fixture)",
    "domain": "developer tools",
    "tools": [
        {"name": "health_check", "description": "Check the API is healthy.", "inputSchema": _obj({})},
        {"name": "get_me", "description": "Who the API key belongs to.", "inputSchema": _obj({})},
    ],
}

# a held-out record service whose records carry nothing to ask about but a name; its tools take ids
RUNBOOKS = {
    "server": "Runbooker (test fixture)",
    "domain": "developer tools",
    "tools": [
        {
            "name": "create_runbook",
            "description": "Create a runbook.",
            "inputSchema": _obj({"name": S}, ["name"]),
        },
        {
            "name": "search_runbooks",
            "description": "Search runbooks by name.",
            "inputSchema": _obj({"query": S, "limit": {"type": "integer", "minimum": 1, "maximum": 100}}),
        },
        {
            "name": "get_runbook",
            "description": "Get one runbook by id.",
            "inputSchema": _obj({"runbook_id": S}, ["runbook_id"]),
        },
    ],
}

# a held-out record service whose list needs a parent workspace's id and a site (required filters)
PAGES = {
    "server": "Pagebook (test fixture)",
    "domain": "productivity",
    "tools": [
        {
            "name": "get_workspace",
            "description": "Get a workspace by id.",
            "inputSchema": _obj({"workspace_id": S}, ["workspace_id"]),
        },
        {
            "name": "create_page",
            "description": "Create a page in a workspace.",
            "inputSchema": _obj(
                {"workspace_id": S, "site": S, "title": S}, ["workspace_id", "site", "title"]
            ),
        },
        {
            "name": "list_pages",
            "description": "List the pages of one site in a workspace.",
            "inputSchema": _obj(
                {"workspace_id": S, "site": S, "limit": {"type": "integer", "minimum": 1, "maximum": 50}},
                ["workspace_id", "site"],
            ),
        },
        {
            "name": "get_page",
            "description": "Get one page by id.",
            "inputSchema": _obj({"page_id": S}, ["page_id"]),
        },
    ],
}

pytestmark = pytest.mark.skipif(not SPECS.is_dir(), reason="shared/mcp-specs is not checked out")


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    fixtures = {"tickerline": MARKET, "pinger": STATUS_ONLY, "runbooker": RUNBOOKS, "pagebook": PAGES}
    with compiled_library(tmp_path_factory.mktemp("manifests"), CORPUS, fixtures) as out:
        yield out


def _tasks(service: str, n: int, attempts: int = 30, kind: str = "info_question") -> list:
    from compoworld.tasks.generator import Rejected, Settings, generate_task
    from compoworld.tasks.model import Task

    out = []
    settings = Settings(families=(f"compiled.{service}.{kind}",), distractors=2)
    for i in range(attempts):
        try:
            out.append(Task.model_validate(generate_task(5, i, settings)))
        except Rejected:
            continue
        if len(out) == n:
            break
    return out


def test_info_services_get_the_family_and_status_only_ones_do_not(library) -> None:
    from compoworld.tasks.families.compiled import INFO_KEY, compiled_families, coverage

    fams = compiled_families()
    for name in [*CORPUS.values(), "tickerline"]:
        assert f"compiled.{name}.info_question" in fams, name
    # health and identity answer no question a colleague asks: no family, and the cause says why
    assert not any(f.startswith("compiled.pinger.") for f in fams)
    cov = coverage()
    assert "info_question" in cov["coinbase"]["families"]
    assert cov["pinger"]["families"] == [] and cov["pinger"]["causes"]
    assert INFO_KEY not in cov["pinger"]["causes"]  # it has no info tool a question can use


@pytest.mark.parametrize("service", [*CORPUS.values(), "tickerline"])
def test_info_tasks_pass_every_gate(library, service) -> None:
    from compoworld.tasks.gates import run_gates

    tasks = _tasks(service, 2)
    assert len(tasks) == 2, service
    for t in tasks:
        failed = {g: why for g, why in run_gates(t).items() if why}
        assert not failed, (t.instruction, failed)
        # the instruction names no figure the work finds, and the question is in the colleague's email
        for r in t.rubric:
            for x in r.check.get("contains", []) if r.check.get("predicate") == "message_sent" else []:
                assert x.casefold() not in t.instruction.casefold()


def _replay(t, body_for, why: list | None = None) -> bool:
    from compoworld.verify.verifier import verify

    env = t.environment()
    for c in t.reference_solution:
        args = dict(c.arguments)
        if c.tool == "email__gmail_send_email":
            args["body"] = body_for(args["body"])
        r = env.call(c.tool, args)
        assert r["success"], r
    v = verify(t, env.snapshot(), t.answer)
    if why is not None:
        why.extend((c.id, c.detail) for c in v.checks if not c.passed)
    return v.passed


@pytest.mark.parametrize(
    "service", ["korea_weather", "coinbase", "lightning_enable", "google_maps", "breez_sdk"]
)
def test_other_words_pass_and_each_near_miss_fails(library, service) -> None:
    for t in _tasks(service, 2):
        goal = next(r.check for r in t.rubric if r.check.get("predicate") == "message_sent")
        said = "Looked it up for you: " + " / ".join(goal["contains"]) + ". Cheers."
        why: list = []
        assert _replay(t, lambda _, said=said: said, why), (t.instruction, why)
        traps = [tr if isinstance(tr, dict) else tr.model_dump() for tr in t.traps]
        assert traps
        for tr in traps:  # the reply that gives the rival's figure instead fails
            for real, rival in tr["swap"].items():
                assert not _replay(t, lambda body, a=real, b=rival: body.replace(a, b)), (t.instruction, tr)


def test_the_answer_is_the_providers(library) -> None:
    """The figure in the checks is what the seeded tool answers in the task's own world."""
    for t in _tasks("korea_weather", 2):
        env = t.environment()
        seen = [
            env.call(c.tool, c.arguments)
            for c in t.reference_solution
            if c.tool.startswith("korea_weather__")
        ]
        assert len(seen) == 3  # three cities, each looked up
        goal = next(r.check for r in t.rubric if r.check.get("predicate") == "message_sent")
        temps = [
            str(d["data"]["days"][1]["high_c"]) if "days" in d["data"] else str(d["data"]["temperature_c"])
            for d in seen
        ]
        assert goal["contains"][1] in temps
        rest = [x for x in temps if x != goal["contains"][1]]
        assert sorted(goal.get("exclude", [])) == sorted(rest)


def test_lazy_solvers_do_not_pass_info_tasks(library) -> None:
    from compoworld.tasks.adversaries import solve_lazily

    tasks = [t for s in ("coinbase", "google_maps", "robtex", "openrouter") for t in _tasks(s, 2)]
    assert len(tasks) == 8
    for t in tasks:
        assert not any(p > 0 for p in solve_lazily(t).values()), t.instruction


def test_a_record_known_only_by_its_name_is_asked_for_by_id(library) -> None:
    """Where a record has no field to ask about but the service's tools take its id, a colleague asks
    for the id of the one they name: the closed copy's, the near-duplicate's and the namesake's ids
    are rivals, and the lazy solvers fail."""
    from compoworld.tasks.adversaries import solve_lazily
    from compoworld.tasks.families.compiled import compiled_families, coverage
    from compoworld.tasks.gates import run_gates

    assert "compiled.runbooker.id_reply" in compiled_families()
    assert "lookup_reply" not in coverage()["runbooker"]["families"]  # nothing else to ask about
    tasks = _tasks("runbooker", 3, kind="id_reply")
    assert len(tasks) == 3
    for t in tasks:
        failed = {g: why for g, why in run_gates(t).items() if why}
        assert not failed, failed
        assert not any(p > 0 for p in solve_lazily(t).values())
        goal = next(r.check for r in t.rubric if r.check.get("predicate") == "message_sent")
        (key,) = goal["contains"]
        assert key not in t.instruction and len(goal["exclude"]) >= 2
        for rival in goal["exclude"]:  # the reply with a rival record's id fails
            assert not _replay(t, lambda body, r=rival, k=key: body.replace(k, r))
        assert _replay(t, lambda _, k=key: f"Here you go: {k}")


def test_a_list_scoped_by_a_parent_and_a_filter_gets_the_scope_from_the_request(library) -> None:
    """A list that needs a workspace id and a site: the colleague's email names both, every planted
    record is in that scope, and the reference lists with it (the class `search_misses_planted`)."""
    from compoworld.tasks.adversaries import solve_lazily
    from compoworld.tasks.gates import run_gates

    tasks = _tasks("pagebook", 2, kind="id_reply")
    assert len(tasks) == 2
    for t in tasks:
        assert not {g: why for g, why in run_gates(t).items() if why}
        assert not any(p > 0 for p in solve_lazily(t).values())
        env = t.environment()
        obs = [env.call(c.tool, c.arguments) for c in t.reference_solution]
        body = obs[1]["data"]["messages"][-1]["body"]
        listed = next(c for c in t.reference_solution if c.tool == "pagebook__list_pages")
        assert listed.arguments["workspace_id"] in body and listed.arguments["site"] in body
        rows = obs[t.reference_solution.index(listed)]["data"]["items"]
        assert len(rows) >= 3 and {r["workspace_id"] for r in rows} == {listed.arguments["workspace_id"]}

"""The service-writing agent: a scripted coder's module runs only in the sandbox; spec-derived tests
decide which tools are kept; every escape is refused with its cause, statically and at run time."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from compoworld.cli.main import app
from compoworld.compiler import compile_spec, load_manifest
from compoworld.compiler.implement import Limits, Violation, evaluate, static_check
from tests.compiler import coder_scripts as c
from tests.scripted_server import ScriptedServer, say

runner = CliRunner()
FAST = Limits(seconds=3.0, cpu_seconds=10, memory_mb=768)


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    p = tmp_path_factory.mktemp("spec") / "notes.json"
    p.write_text(json.dumps(c.NOTES_SPEC))
    return p


@pytest.fixture(scope="module")
def manifest(spec):
    return compile_spec(spec)


def fenced(code: str) -> dict:
    return say(f"Here is the module:\n```python\n{code}\n```")


def test_a_good_module_keeps_every_tool(manifest):
    r = evaluate(c.GOOD, manifest, FAST)
    assert r["violation"] is None
    assert {n: t["kept"] for n, t in r["tools"].items()} == dict.fromkeys(
        ["create_note", "get_note", "delete_note", "list_notes"], True
    )


def test_a_schema_that_is_not_the_specs_is_not_kept(manifest):
    r = evaluate(c.WRONG_SCHEMA, manifest, FAST)
    assert r["tools"]["get_note"]["kept"] is False
    assert "schema" in r["tools"]["get_note"]["why"][0]
    assert r["tools"]["list_notes"]["kept"] is True  # what passes its tests is still kept


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        (c.IMPORTS_OS, "forbidden_import"),
        (c.OPENS_SOCKET, "network"),
        ("import subprocess\n" + c.GOOD, "process"),
        ("x = eval('1')\n" + c.GOOD, "forbidden_name"),
        ("x = ().__class__.__base__\n" + c.GOOD, "forbidden_attribute"),
        ("def broken(:\n", "syntax"),
    ],
)
def test_the_static_check_refuses_before_anything_runs(code, cause):
    with pytest.raises(Violation) as e:
        static_check(code)
    assert e.value.cause == cause


@pytest.mark.parametrize(
    ("name", "cause"),
    [
        ("SNEAKS_OS", "process"),  # os.system through an allowed module: the audit hook ends it
        ("SNEAKS_SOCKET", "network"),
        ("READS_HOST", "file_access"),
        ("LOOPS_FOREVER", "timeout"),
        ("EATS_MEMORY", "memory"),
        ("WRITES_OWN_FOLDER", "file_access"),  # nothing is written, not even in its own folder
        ("FORGES_ON_THE_PIPE", "file_access"),
        ("LISTS_HOST", "forbidden_call"),
        ("KILLS_PARENT", "forbidden_call"),
        ("HUGE_REPLY", "memory"),
        ("SUBVERTS_HOOK", "process"),  # what the hook uses was bound before the module ran
        ("READS_FRAMES", "forbidden_call"),
    ],
)
def test_the_sandbox_refuses_every_escape_at_run_time(manifest, name, cause):
    code = getattr(c, name)
    static_check(code)  # these pass the static check: only the running sandbox can stop them
    r = evaluate(code, manifest, FAST)
    assert r["violation"]["cause"] == cause, r["violation"]
    assert not any(t["kept"] for t in r["tools"].values())  # a module that broke a rule keeps nothing


def test_the_sandbox_alone_bounds_the_module_past_the_engines_own_call_limit(manifest):
    # the engine's default per-call limit (2 s of CPU) must not run inside the sandbox: there it
    # raced the wall-clock kill and a loop came back as a 422 on a quiet machine
    from compoworld.core.limits import DEFAULT_CPU_S

    seconds = 2 * DEFAULT_CPU_S + 1
    r = evaluate(c.LOOPS_FOREVER, manifest, Limits(seconds=seconds, cpu_seconds=30))
    assert r["violation"] == {"cause": "timeout", "detail": f"no answer within {seconds}s (killed)"}
    assert all("422" not in " ".join(t["why"]) for t in r["tools"].values())


def test_what_the_module_prints_never_reaches_the_parent(manifest):
    r = evaluate(c.FORGES_REPLY, manifest, FAST)
    assert r["violation"] is None and all(t["kept"] for t in r["tools"].values())  # the protocol held


def test_the_runtime_hook_also_stops_a_plain_import_when_the_static_check_is_skipped(manifest):
    from compoworld.compiler.implement import Sandbox

    with pytest.raises(Violation) as e:
        Sandbox("import os\nos.system('echo hi')\n", FAST, static=False)
    assert e.value.cause == "forbidden_import"


def test_cli_implement_keeps_what_passes_and_the_rest_falls_back(spec, tmp_path):
    out = tmp_path / "notes"
    script = [fenced(c.WRONG_SCHEMA), fenced(c.IMPORTS_OS)]  # the rewrite is worse: the best one stays
    with ScriptedServer(script) as srv:
        r = runner.invoke(
            app,
            [
                "spec",
                "implement",
                str(spec),
                "--model",
                "coder",
                "--base-url",
                srv.url,
                "--out",
                str(out),
                "--seconds",
                "3",
                "--rounds",
                "1",
            ],
        )
        prompt = srv.requests[0]["messages"][1]["content"]
        feedback = srv.requests[1]["messages"][-1]["content"]
    assert r.exit_code == 0, r.output
    assert "get_note" in prompt and "note_id" in prompt  # the spec's names and schemas go to the model
    assert "schema" in feedback  # the failing tests go back to the model
    report = json.loads((out / "report.json").read_text())
    assert "get_note" not in report["kept"] and "list_notes" in report["kept"]
    assert report["fallback"]["get_note"] == "compiled"
    assert [a.get("violation", {}) and a["violation"]["cause"] for a in report["attempts"]] == [
        None,
        "forbidden_import",
    ]
    assert (out / "service.py").read_text().strip() == c.WRONG_SCHEMA.strip()
    m = json.loads((out / "manifest.json").read_text())
    by = {t["name"]: t for t in m["tools"]}
    assert by["list_notes"]["implementation"] == "sandbox" and "implementation" not in by["get_note"]
    assert [t["name"] for t in m["tools"]] == [t["name"] for t in c.NOTES_SPEC["tools"]]  # the spec's names
    load_manifest(out / "manifest.json")  # still a manifest the compiler's runtime loads


def test_cli_implement_refuses_a_file_that_is_no_spec(tmp_path):
    bad = tmp_path / "readme.json"
    bad.write_text('{"hello": 1}')
    r = runner.invoke(
        app,
        [
            "spec",
            "implement",
            str(bad),
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert r.exit_code == 2 and "not an MCP tool spec" in r.output


def test_kept_tools_serve_from_the_sandbox_and_share_one_state_with_the_compiled_ones(spec, tmp_path):
    from compoworld.compiler.implement import load_implemented
    from compoworld.core.environment import Environment

    out = tmp_path / "impl"
    with ScriptedServer([fenced(c.WRONG_SCHEMA)]) as srv:
        r = runner.invoke(
            app,
            [
                "spec",
                "implement",
                str(spec),
                "--model",
                "coder",
                "--base-url",
                srv.url,
                "--out",
                str(out),
                "--seconds",
                "3",
                "--rounds",
                "0",
            ],
        )
    assert r.exit_code == 0, r.output
    cls = load_implemented(out, FAST)
    assert "create_note" in cls.implementation["kept"] and "get_note" not in cls.implementation["kept"]
    env = Environment([cls], seed=0, size="small")
    made = env.call("notes__create_note", {"title": "Quarterly plan", "body": "draft"})  # the module's code
    assert made["success"], made
    got = env.call("notes__get_note", {"note_id": made["data"]["id"]})  # the compiler's code, same state
    assert got["success"] and got["data"]["title"] == "Quarterly plan"
    h = env.state_hash()
    bad = env.call("notes__create_note", {"title": 5, "body": "x"})  # the spec's schema is checked first
    assert bad["error"]["code"] == 400 and env.state_hash() == h
    env.restore(env.initial)
    assert env.call("notes__get_note", {"note_id": made["data"]["id"]})["error"]["code"] == 404


def test_a_write_the_typed_model_refuses_changes_nothing(manifest):
    from compoworld.compiler.implement import implemented_service
    from compoworld.core.environment import Environment

    cls = implemented_service(manifest, c.BAD_STATE, ["create_note"], FAST)
    env = Environment([cls], seed=0, size="small")
    h = env.state_hash()
    r = env.call("notes__create_note", {"title": "t", "body": "b"})
    assert r["error"]["code"] == 500 and "model refuses" in r["error"]["message"]
    assert env.state_hash() == h
    assert not evaluate(c.BAD_STATE, manifest, FAST)["tools"]["create_note"]["kept"]


def test_the_manifest_loads_into_the_library_with_its_kept_tools(spec, tmp_path):
    out = tmp_path / "impl"
    with ScriptedServer([fenced(c.GOOD)]) as srv:
        assert (
            runner.invoke(
                app,
                [
                    "spec",
                    "implement",
                    str(spec),
                    "--model",
                    "coder",
                    "--base-url",
                    srv.url,
                    "--out",
                    str(out),
                    "--seconds",
                    "3",
                    "--rounds",
                    "0",
                ],
            ).exit_code
            == 0
        )
    cls = load_manifest(out / "manifest.json")
    assert cls.implementation["kept"] == ["create_note", "delete_note", "get_note", "list_notes"]
    r = runner.invoke(
        app,
        [
            "--manifests",
            str(out / "manifest.json"),
            "call",
            "--services",
            "notes",
            "notes__create_note",
            '{"title": "From the CLI", "body": "x"}',
        ],
    )
    assert r.exit_code == 0 and '"From the CLI"' in r.output, r.output


def test_the_sandbox_has_no_network_namespace_where_unshare_can_make_one(manifest):
    from compoworld.compiler.implement import Sandbox, _netns

    with Sandbox(c.GOOD, FAST) as sb:
        assert sb.isolated == bool(_netns())


def test_a_slow_session_holds_only_its_own_worker(manifest):
    import threading

    from compoworld.compiler.implement import implemented_service
    from compoworld.core.environment import Environment

    slow = c.GOOD.replace(
        '        """List notes."""\n',
        '        """List notes."""\n        n = 0\n        while n < 10 ** 9:\n            n += 1\n',
    )
    cls = implemented_service(
        manifest, slow, ["list_notes", "create_note"], Limits(seconds=4.0, cpu_seconds=30)
    )
    hog, quiet = Environment([cls], seed=0, size="small"), Environment([cls], seed=0, size="small")
    from compoworld.core.limits import CallLimits

    # the sandbox's own wall-clock kill is what this test is about, not the engine's CPU or memory bound
    hog.limits = CallLimits(cpu_s=60, memory_bytes=1 << 40)
    assert quiet.call("notes__create_note", {"title": "warm", "body": "up"})["success"]  # one worker up
    results: dict = {}
    t = threading.Thread(target=lambda: results.update(hog=hog.call("notes__list_notes", {})))
    t.start()
    made = quiet.call("notes__create_note", {"title": "meanwhile", "body": "x"})  # a second worker
    assert made["success"], made
    t.join()
    assert results["hog"]["error"]["code"] == 500 and "timeout" in results["hog"]["error"]["message"]
    assert cls.violations[-1].cause == "timeout"
    assert quiet.call("notes__create_note", {"title": "after", "body": "x"})["success"]  # replaced

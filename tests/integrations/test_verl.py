"""verl, for real: its schema model, its tool registry and RL dataset, and our tool driven the way
`ToolAgentLoop` drives it; `compute_score` on the text verl hands a reward function.

verl's agent loop module needs packages verl does not declare (cachetools, fastapi: the [train] extra
adds them); where it imports, `ToolAgentLoop._call_tool` itself drives the tool, and everywhere
`_call` does what it does (tool_agent_loop.py l. 456-496, rewards l. 375-376).
"""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path

import pytest

pytest.importorskip("verl")

import jsonschema  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from typer.testing import CliRunner  # noqa: E402
from verl.tools.schemas import OpenAIFunctionToolSchema  # noqa: E402
from verl.tools.tool_registry import initialize_tools_from_config  # noqa: E402

from compoworld.agents.policies import oracle_turns  # noqa: E402
from compoworld.cli.main import app  # noqa: E402
from compoworld.core.envelope import envelope_text  # noqa: E402
from compoworld.core.environment import tool_entry  # noqa: E402
from compoworld.core.schema import typed_properties  # noqa: E402
from compoworld.integrations import verl as cv  # noqa: E402
from compoworld.services import registry  # noqa: E402
from compoworld.tasks.adversaries import swap_args, write_calls  # noqa: E402
from compoworld.tasks.generator import Settings  # noqa: E402
from compoworld.tasks.model import save_tasks  # noqa: E402
from compoworld.tasks.pipeline import generate  # noqa: E402

try:  # verl's own AgentData where its module imports (see the module's note)
    from verl.experimental.agent_loop.tool_agent_loop import AgentData, ToolAgentLoop
except ImportError:
    AgentData = ToolAgentLoop = None

runner = CliRunner()
SPECS = Path(__file__).resolve().parents[3] / "shared" / "mcp-specs"


class _AgentData:
    """The fields of verl's AgentData (tool_agent_loop.py l. 55-98) a tool reads and the loop fills."""

    def __init__(self, request_id: str, tools_kwargs: dict) -> None:
        self.request_id = request_id
        self.tools_kwargs = tools_kwargs
        self.extra_fields: dict = {}
        self.tool_rewards: list[float] = []
        self.assistant_turns = 0


def agent_data(request_id: str, tools_kwargs: dict):
    if AgentData is None:
        return _AgentData(request_id, tools_kwargs)
    return AgentData(
        messages=[],
        image_data=None,
        video_data=None,
        audio_data=None,
        mm_processor_kwargs=None,
        metrics={},
        request_id=request_id,
        tools_kwargs=tools_kwargs,
    )


async def _call(tools: dict, data, name: str, arguments: dict) -> str:
    """One call as ToolAgentLoop._call_tool makes it: create, execute with agent_data, release."""
    if name not in tools:
        return f"Unknown function '{name}'"
    tool = tools[name]
    kwargs = data.tools_kwargs.get(name, {})
    instance_id, _ = await tool.create(create_kwargs=kwargs.get("create_kwargs", {}))
    try:
        response, reward, _ = await tool.execute(instance_id, arguments, agent_data=data)
    finally:
        await tool.release(instance_id)
    if reward is not None:
        data.tool_rewards.append(reward)
    return response.text


async def rollout(tools: dict, data, turns: list[list[tuple[str, dict]]]) -> list[list[str]]:
    """A scripted policy's turns through the tools; returns each turn's tool results."""
    out = []
    for calls in turns:
        data.assistant_turns += 1
        out.append([await _call(tools, data, n, a) for n, a in calls])
    return out


def hermes_text(turns: list[list[tuple[str, dict]]], results: list[list[str]]) -> str:
    """The response text verl decodes (skip_special_tokens drops <|im_start|>/<|im_end|>) for a
    hermes/Qwen template: calls in <tool_call>, results in <tool_response> inside a user turn."""
    parts = []
    for calls, res in zip(turns, results, strict=True):
        parts.append("\n".join(cv.format_tool_call(n, a) for n, a in calls) + "\nuser\n")
        parts.append("\n".join(f"<tool_response>\n{r}\n</tool_response>" for r in res) + "\nassistant\n")
    return "".join(parts)


def gateway_turns(task, answer: str | None) -> list[list[tuple[str, dict]]]:
    return [*oracle_turns(task, gateway=True), [("finish", {"answer": answer or ""})]]


def direct_turns(task, answer: str | None) -> list[list[tuple[str, dict]]]:
    return [*oracle_turns(task), [("finish", {"answer": answer or ""})]]


NOOP = [[("finish", {"answer": ""})]]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("verl")
    tasks = generate(2, 33, Settings())[0]
    save_tasks(tasks, root / "tasks.jsonl")
    for mode in ("gateway", "direct"):
        for args in (
            ["export", "rl", "--tasks", str(root / "tasks.jsonl"), "--format", "verl", "--mode", mode],
            ["export", "verl-tools", "--mode", mode, "--tasks", str(root / "tasks.jsonl")],
        ):
            out = root / (f"{mode}.parquet" if args[1] == "rl" else f"{mode}.yaml")
            r = runner.invoke(app, [*args, "--out", str(out)])
            assert r.exit_code == 0, r.output
    return root, tasks


def _rows(path: Path) -> list[dict]:
    from verl.utils.dataset.rl_dataset import RLHFDataset

    ds = RLHFDataset(
        data_files=str(path), tokenizer=None, config=OmegaConf.create({"filter_overlong_prompts": False})
    )
    return [ds[i] for i in range(len(ds))]


def _tools(path: Path) -> dict:
    return {t.name: t for t in initialize_tools_from_config(str(path))}


# ---- schemas ------------------------------------------------------------------------------------
def test_every_hand_built_tool_schema_passes_verls_model() -> None:
    schemas = cv.tool_schemas("direct", registry()) + cv.tool_schemas("gateway")
    assert len(schemas) > 400
    for s in schemas:
        assert OpenAIFunctionToolSchema.model_validate(s).function.name == s["function"]["name"]
        jsonschema.Draft202012Validator.check_schema(s["function"]["parameters"])
    for s in registry().values():  # MCP's form carries the same input schema
        for name, spec in s.tool_specs.items():
            assert (
                tool_entry(name, spec, "mcp")["inputSchema"]
                == tool_entry(name, spec, "openai")["function"]["parameters"]
            )


def test_typed_unions_validate_exactly_what_they_did() -> None:
    untyped = {
        "type": "object",
        "properties": {
            "u": {"anyOf": [{"type": "string"}, {"type": "object"}]},
            "n": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
            "e": {"enum": ["a", 1]},
            "any": {"description": "anything"},
            "o": {"oneOf": [{"type": "integer"}, {"type": "array", "items": {"type": "string"}}]},
        },
    }
    typed = typed_properties(untyped)
    assert typed is not untyped and all("type" in p for p in typed["properties"].values())
    assert typed["properties"]["u"]["type"] == ["string", "object"]
    OpenAIFunctionToolSchema.model_validate(
        {"type": "function", "function": {"name": "t", "description": "d", "parameters": typed}}
    )
    a, b = jsonschema.Draft202012Validator(untyped), jsonschema.Draft202012Validator(typed)
    values = ["", "ab", "x", 0, 1, 2.5, True, None, [], ["s"], [1], {}, {"k": 1}, "a"]
    for key in untyped["properties"]:
        for v in values:
            assert a.is_valid({key: v}) == b.is_valid({key: v}), (key, v)
    done = {"type": "object", "properties": {"x": {"type": "string"}}}
    assert typed_properties(done) is done  # already typed: the same dict, nothing copied


@pytest.mark.skipif(not SPECS.exists(), reason="shared/mcp-specs is not next to the checkout")
def test_compiled_corpus_schemas_pass_verls_model() -> None:
    from compoworld.compiler import load_spec

    files = sorted(SPECS.glob("*.json")) + sorted((SPECS / "corpus").glob("*.json"))[::10]
    n = 0
    for f in files:
        for t in load_spec(f).tools:
            params = typed_properties(t.input_schema)
            entry = {"type": "function", "function": {"name": "t", "description": "d", "parameters": params}}
            OpenAIFunctionToolSchema.model_validate(entry)
            n += 1
    assert n > 500


# ---- the tool config and the rows ------------------------------------------------------------------
def test_tool_config_loads_through_verls_registry(world) -> None:
    root, tasks = world
    gw = _tools(root / "gateway.yaml")
    assert list(gw) == ["list_services", "list_tools", "describe_tool", "call_tool", "finish"]
    assert all(type(t).__name__ == "CompoWorldTool" and t.mode == "gateway" for t in gw.values())
    direct = _tools(root / "direct.yaml")
    wanted = {n for t in tasks for s in t.all_services for n in cv._tool_names([s])} | {"finish"}
    assert set(direct) == wanted
    assert type(direct["finish"]) is cv.CompoWorldTool


def test_rows_carry_what_verls_agent_loop_reads(world) -> None:
    root, tasks = world
    for mode in ("gateway", "direct"):
        rows = _rows(root / f"{mode}.parquet")
        assert [r["extra_info"]["task_id"] for r in rows] == [t.id for t in tasks]
        for row, task in zip(rows, tasks, strict=True):
            assert row["agent_name"] == "tool_agent" and row["data_source"] == "compoworld"
            assert row["raw_prompt"][1]["content"].startswith(task.instruction)
            finish = row["tools_kwargs"]["finish"]["create_kwargs"]
            assert cv.load_task(finish["task"]).to_json() == task.to_json()
            assert json.loads(row["extra_info"]["task"])["id"] == task.id  # the existing column
            selection = row["extra_info"].get("tool_selection")
            if mode == "gateway":
                assert selection is None
            else:
                assert set(selection) == {*cv._tool_names(task.all_services), "finish"}
                assert all(row["tools_kwargs"][n]["create_kwargs"]["task_id"] == task.id for n in selection)
    import pyarrow.parquet as pq

    from compoworld.export.rl import export_rl

    export_rl(tasks, root / "trl.parquet", "trl", "gateway")  # the trl rows keep their columns
    assert pq.read_table(root / "trl.parquet").column_names == ["prompt", "task_id", "tools", "task"]


# ---- the tool, driven as ToolAgentLoop drives it -----------------------------------------------------
@pytest.mark.parametrize("mode", ["gateway", "direct"])
def test_tool_replays_reference_to_1_and_noop_to_0(world, mode) -> None:
    root, tasks = world
    tools = _tools(root / f"{mode}.yaml")
    rows = _rows(root / f"{mode}.parquet")
    script = gateway_turns if mode == "gateway" else direct_turns
    for i, (row, task) in enumerate(zip(rows, tasks, strict=True)):
        good = agent_data(f"{mode}-{i}-ref", row["tools_kwargs"])
        results = asyncio.run(rollout(tools, good, script(task, task.answer)))
        assert good.tool_rewards[-1] == 1.0 and sum(good.tool_rewards) == 1.0
        verdict = good.extra_fields["extras"]["compoworld"]["verdict"]
        assert verdict["V"] == 1 and verdict["task_id"] == task.id and verdict["format_ok"]
        assert results[-1] == ['{"success":true,"data":{"finished":true}}']
        for turn in results[:-1]:
            assert all(json.loads(r)["success"] for r in turn), turn
        noop = agent_data(f"{mode}-{i}-noop", row["tools_kwargs"])
        asyncio.run(rollout(tools, noop, NOOP))
        assert noop.tool_rewards == [0.0] and noop.extra_fields["extras"]["compoworld"]["verdict"]["score"] == 0
        # after finish the episode is over: a further call changes nothing and earns nothing
        late = asyncio.run(rollout(tools, noop, [script(task, task.answer)[-2]]))
        assert all(json.loads(r)["error"]["code"] == 409 for r in late[0]) and noop.tool_rewards == [0.0] * (
            1 + len(late[0])
        )


def test_lifecycle_create_execute_calc_reward_release(world) -> None:
    root, tasks = world
    task = tasks[1]
    tools = _tools(root / "direct.yaml")
    src = {"task": task.to_line().decode()}
    first = task.reference_solution[0]
    tool = tools[first.tool]

    async def run():
        data = agent_data("req-1", {})
        iid, created = await tool.create(instance_id="inst-1", create_kwargs=src)
        assert iid == "inst-1" and created.text is None
        resp, step, metrics = await tool.execute(iid, first.arguments, agent_data=data)
        assert json.loads(resp.text)["success"] and step == 0.0 and metrics == {"success": True}
        assert await tool.calc_reward(iid, agent_data=data) == 0.0  # nothing verified yet
        await tool.release(iid)
        assert len(cv.ROLLOUTS) == 1  # the rollout (request req-1) lives on past the call's instance
        # the next call of the same rollout, from another tool object, sees the same environment
        for c in task.reference_solution[1:]:
            await _call(tools, data, c.tool, c.arguments)
        await _call(tools, data, "finish", {"answer": task.answer or ""})
        assert data.tool_rewards[-1] == 1.0
        fid, _ = await tools["finish"].create(create_kwargs={})
        assert await tools["finish"].calc_reward(fid, agent_data=data) == 1.0
        await tools["finish"].release(fid)
        return data

    cv.ROLLOUTS.items.clear()
    data = asyncio.run(run())
    del data
    gc.collect()
    assert len(cv.ROLLOUTS) == 0  # freed with its AgentData: verl has no end-of-rollout hook

    async def keyed_by_instance():  # a driver without agent_data: the instance is the rollout
        iid, _ = await tool.create(instance_id="solo", create_kwargs=src)
        await tool.execute(iid, first.arguments)
        assert len(cv.ROLLOUTS) == 1
        await tool.release(iid)
        assert len(cv.ROLLOUTS) == 0

    asyncio.run(keyed_by_instance())


def test_concurrent_rollouts_of_one_task_do_not_share_state(world) -> None:
    root, tasks = world
    tools = _tools(root / "gateway.yaml")
    row = _rows(root / "gateway.parquet")[1]
    task = tasks[1]
    assert task.answer is None  # the writes alone solve it
    ref = gateway_turns(task, task.answer)
    writes = [
        [("call_tool", {"tool": c["tool"], "arguments": c["arguments"]})]
        for c in write_calls(task.environment(), task)
    ]

    async def step(a, b):
        # interleaved: b lists and reads while a writes; a finishes, then b with nothing written
        await asyncio.gather(rollout(tools, a, ref[:-1]), rollout(tools, b, ref[:3]))
        await rollout(tools, a, ref[-1:])
        await rollout(tools, b, NOOP)

    a, b = agent_data("det-0", row["tools_kwargs"]), agent_data("det-1", row["tools_kwargs"])
    asyncio.run(step(a, b))
    assert a.tool_rewards[-1] == 1.0 and b.tool_rewards[-1] == 0.0
    # verl's det-N ids repeat at the next step: a rollout with an old id starts from s0 (the writes
    # once more would fail on a shared state, and a finished one would refuse them)
    c = agent_data("det-0", row["tools_kwargs"])
    asyncio.run(rollout(tools, c, [*writes, *NOOP]))
    assert c.tool_rewards[-1] == 1.0 and a.tool_rewards[-1] == 1.0


def test_tool_results_never_carry_ground_truth(world) -> None:
    root, tasks = world
    tools = _tools(root / "gateway.yaml")
    row = _rows(root / "gateway.parquet")[0]
    task = tasks[0]
    data = agent_data("gt", row["tools_kwargs"])
    results = asyncio.run(rollout(tools, data, gateway_turns(task, task.answer)))
    text = "\n".join(r for turn in results for r in turn)
    for item in task.rubric:  # neither a check nor what it says
        assert item.description not in text and json.dumps(item.check, separators=(",", ":")) not in text
    for word in ("rubric", "reference_solution", "initial_state", "verdict", task.hint):
        assert word not in text


@pytest.mark.skipif(ToolAgentLoop is None, reason="verl's agent loop needs cachetools and fastapi ([train])")
def test_toolagentloop_call_tool_drives_the_tool(world) -> None:
    from verl.experimental.agent_loop.tool_parser import FunctionCall

    root, tasks = world
    loop = ToolAgentLoop.__new__(ToolAgentLoop)  # only what _call_tool reads
    loop.tools = _tools(root / "gateway.yaml")
    loop.max_tool_response_length, loop.tool_response_truncate_side = 1 << 20, "middle"
    row = _rows(root / "gateway.parquet")[0]
    task = tasks[0]
    data = agent_data("loop", row["tools_kwargs"])

    async def run():
        for calls in gateway_turns(task, task.answer):
            data.assistant_turns += 1
            for name, args in calls:
                call = FunctionCall(name=name, arguments=json.dumps(args))
                _, reward, _ = await loop._call_tool(call, data.tools_kwargs, data)
                data.tool_rewards.append(reward)

    asyncio.run(run())
    assert data.tool_rewards[-1] == 1.0 and data.extra_fields["extras"]["compoworld"]["verdict"]["V"] == 1


# ---- compute_score ------------------------------------------------------------------------------
def _score(row, text, **kw) -> dict:
    return cv.compute_score(
        row["data_source"], text, row["reward_model"]["ground_truth"], row["extra_info"], **kw
    )


def test_compute_score_ranks_perfect_above_empty_spray_and_garbage(world) -> None:
    root, tasks = world
    task = tasks[1]  # its traps can be acted on: a spray writes to the decoys as well
    for mode, script in (("gateway", gateway_turns), ("direct", direct_turns)):
        row = _rows(root / f"{mode}.parquet")[1]
        tools = _tools(root / f"{mode}.yaml")
        turns = script(task, task.answer)
        data = agent_data(f"score-{mode}", row["tools_kwargs"])
        perfect = hermes_text(turns, asyncio.run(rollout(tools, data, turns)))
        env = task.environment()
        spray_calls = [
            {**c, "arguments": swap_args(c["arguments"], trap.swap)}
            for trap in task.traps
            if trap.swap
            for c in write_calls(env, task)
        ]
        assert spray_calls
        wrap = (
            (lambda c: ("call_tool", {"tool": c["tool"], "arguments": c["arguments"]}))
            if mode == "gateway"
            else (lambda c: (c["tool"], c["arguments"]))
        )
        spray_turns = [*turns[:-1], [wrap(c) for c in spray_calls], turns[-1]]
        spray = hermes_text(spray_turns, [["{}"]] * len(spray_turns))
        garbage = "<tool_call>\n{not json\n</tool_call>\nuser\n<tool_response>\nerror\n</tool_response>\n" * 3
        texts = {"perfect": perfect, "empty": "", "chat": "I did it.", "spray": spray, "garbage": garbage}
        for reward in ("score", "V", "wildawm"):
            got = {k: _score(row, v, reward=reward, source="text")["score"] for k, v in texts.items()}
            assert got["perfect"] == 1.0, (mode, reward, got)
            assert all(got[k] < got["perfect"] for k in texts if k != "perfect"), (mode, reward, got)
            # doing nothing earns nothing; never calling finish is a format failure (rewards.format)
            assert got["empty"] == (-1.0 if reward == "wildawm" else 0.0)
        assert _score(row, garbage, reward="wildawm")["score"] == -1.0  # three malformed turns: format
        # the tool's verdict, where verl merged it into extra_info, gives the same reward without replay
        merged = {
            **row["extra_info"],
            "extras": data.extra_fields["extras"],
            "tool_rewards": data.tool_rewards,
        }
        via_tool = cv.compute_score("compoworld", "", None, merged)
        assert via_tool["from_log"] == 1.0 and via_tool["score"] == _score(row, perfect)["score"] == 1.0
        # a tokenizer that drops the tags (special tokens skipped): the bare calls still replay
        bare = perfect.replace("<tool_call>", "").replace("</tool_call>", "")
        bare = bare.replace("<tool_response>", "").replace("</tool_response>", "")
        assert _score(row, bare)["score"] == 1.0


def test_compute_score_errors_are_clear(world) -> None:
    root, _ = world
    row = _rows(root / "gateway.parquet")[0]
    with pytest.raises(ValueError, match="no 'task'"):
        cv.compute_score("compoworld", "", None, {})
    with pytest.raises(ValueError, match="unknown reward"):
        _score(row, "", reward="nope")


@pytest.mark.parametrize("how", ["file", "pkg"])
def test_verl_loads_compute_score_as_its_custom_reward_function(world, how) -> None:
    from verl.trainer.ppo.reward import get_custom_reward_fn

    root, tasks = world
    task = tasks[0]
    row = _rows(root / "direct.parquet")[0]
    path = cv.__file__ if how == "file" else "pkg://compoworld.integrations.verl"
    cfg = {"path": path, "name": "compute_score", "reward_kwargs": {"reward": "wildawm"}}
    fn = get_custom_reward_fn(OmegaConf.create({"reward": {"custom_reward_function": cfg}}))
    turns = direct_turns(task, task.answer)
    text = hermes_text(turns, _real_results(task, turns))
    kw = {"data_source": "compoworld", "ground_truth": row["reward_model"]["ground_truth"]}
    assert fn(solution_str=text, extra_info=row["extra_info"], **kw)["score"] == 1.0
    # made-up results are the model's own text: its calls never ran, and it never finished
    forged = hermes_text(turns, [["{}"] * len(t) for t in turns])
    assert fn(solution_str=forged, extra_info=row["extra_info"], **kw)["score"] == -1.0
    assert fn(solution_str="", extra_info=row["extra_info"], **kw)["score"] == -1.0


def _real_results(task, turns) -> list[list[str]]:
    """What verl's runner answers each call of `turns` (the envelopes of a replay)."""
    r = cv.Rollout(task)
    return [[envelope_text(r.call(n, a, turn=i + 1)) for n, a in calls] for i, calls in enumerate(turns)]

"""TRL, for real: SFTTrainer on exported rows, GRPOTrainer with CompoWorld's environment factory.

Everything runs on a tiny model built here (a BPE trained on the exported text, TRL's Qwen2.5 tool
template, a random 2-layer Qwen2), with no hub download. GRPO's policy is scripted: the model's
`generate` writes the task's reference (or a no-op) as tool-call text, and everything else (prompt
rendering with the environment's tools, tool-call parsing, the tool loop, rewards, the loss) is
TRL's own code, unmocked.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import os

import pytest

pytest.importorskip("trl")
pytest.importorskip("jmespath")  # TRL's tool-call parser on transformers < 5.13

import pyarrow.parquet as pq  # noqa: E402
from datasets import load_dataset  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402
from transformers.utils import get_json_schema  # noqa: E402

from compoworld.agents.loop import run_episode  # noqa: E402
from compoworld.agents.policies import OracleAgent, oracle_turns  # noqa: E402
from compoworld.export.rl import export_rl  # noqa: E402
from compoworld.export.sft import TooManyTools, export_sft, row_lengths, sft_record, sft_rows  # noqa: E402
from compoworld.export.tools import MAX_OPENAI_TOOLS  # noqa: E402
from compoworld.integrations.tiny import build_tiny, row_texts, scripted_model  # noqa: E402
from compoworld.integrations.trl import (  # noqa: E402
    CompoWorldEnv,
    compoworld_env,
    compoworld_reward,
    direct_environments,
)
from compoworld.tasks.generator import Settings  # noqa: E402
from compoworld.tasks.pipeline import generate  # noqa: E402

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")


def _episode(task, mode):
    rec = asyncio.run(run_episode(task, OracleAgent(), mode=mode)).record()
    rec["all_services"] = task.all_services  # as the runner records it
    assert rec["V"] == 1
    return rec


@pytest.fixture(scope="session")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("trl")
    tasks = generate(3, 33, Settings())[0]
    direct = [_episode(t, "direct") for t in tasks]
    gateway = [_episode(t, "gateway") for t in tasks]
    export_sft(gateway, root / "sft.jsonl", "trl")
    for mode in ("gateway", "direct"):
        export_rl(tasks, root / f"rl_{mode}.parquet", "trl", mode)
    rows = {m: pq.read_table(str(root / f"rl_{m}.parquet")).to_pylist() for m in ("gateway", "direct")}
    sft = [json.loads(line) for line in (root / "sft.jsonl").read_text().splitlines()]
    model = build_tiny(root / "tiny", row_texts([*sft, *rows["gateway"]]))
    return {"root": root, "tasks": tasks, "direct": direct, "gateway": gateway, "rl": rows, "model": model}


def _norm(messages):
    out = []
    for m in messages:
        calls = [
            (tc["function"]["name"], json.loads(tc["function"]["arguments"]))
            for tc in m.get("tool_calls") or []
        ]
        out.append((m["role"], m.get("content") if m["role"] != "assistant" else None, calls))
    return out


# ---- lean rows ----------------------------------------------------------------------------
def test_sft_rows_carry_the_offered_tools_and_never_more_than_128(world) -> None:
    over = 0
    for ep, gw in zip(world["direct"], world["gateway"], strict=True):
        offered = ep["offered"]
        assert offered[-1] == "finish" and len(offered) > 50  # direct: every tool of the task's services
        for fmt in ("openai", "trl"):
            assert [t["function"]["name"] for t in sft_record(ep, fmt)["tools"]] == gw["offered"]  # default
            row = sft_record(ep, fmt, tools="auto")
            names = [t["function"]["name"] for t in row["tools"]]
            assert len(names) <= MAX_OPENAI_TOOLS
            assert names == (offered if len(offered) <= MAX_OPENAI_TOOLS else gw["offered"])
        exact = sft_record(ep, "trl", tools="offered")
        assert [t["function"]["name"] for t in exact["tools"]] == offered
        if len(offered) > MAX_OPENAI_TOOLS:
            over += 1
            with pytest.raises(TooManyTools, match=ep["task_id"]):
                sft_record(ep, "openai", tools="offered")
        # the gateway form of a direct episode is the conversation the gateway really gives
        assert _norm(sft_record(ep, "openai")["messages"]) == _norm(sft_record(gw, "openai")["messages"])
        assert [t["function"]["name"] for t in sft_record(gw, "openai")["tools"]] == gw["offered"]
    assert over  # 5 distractors: some task offers more than 128 tools


# ---- SFT --------------------------------------------------------------------------------
def test_sft_trainer_trains_on_assistant_tokens_only(world, tmp_path) -> None:
    from trl import SFTConfig, SFTTrainer

    tok = AutoTokenizer.from_pretrained(world["model"])
    ds = load_dataset("json", data_files=str(world["root"] / "sft.jsonl"), split="train")
    rows = sft_rows(world["gateway"], "trl")
    assert ds[0]["messages"] == rows[0]["messages"] and ds[0]["tools"] == rows[0]["tools"]  # no null padding
    lengths = row_lengths(rows, tok)
    keep = sorted(range(len(rows)), key=lambda i: lengths[i][0])[:2]
    ds = ds.select(keep)
    args = SFTConfig(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=1,
        assistant_only_loss=True,
        max_length=max(lengths[i][0] for i in keep),
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        logging_steps=1,
    )
    model = AutoModelForCausalLM.from_pretrained(world["model"])
    trainer = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok)
    ex = trainer.train_dataset[0]
    ids, mask = ex["input_ids"], [lab != -100 for lab in ex["labels"]]  # labels: -100 off the assistant turns
    assert len(ids) == lengths[keep[0]][0]  # nothing truncated
    inside = tok.decode([t for t, m in zip(ids, mask, strict=True) if m])
    outside = tok.decode([t for t, m in zip(ids, mask, strict=True) if not m])
    row = rows[keep[0]]
    for m in row["messages"]:
        for tc in m.get("tool_calls") or []:
            assert json.dumps(tc["function"]["arguments"], ensure_ascii=False) in inside
        if m["role"] in ("system", "user", "tool"):
            assert m["content"] not in inside and m["content"] in outside
    n_calls = sum(len(m.get("tool_calls") or []) for m in row["messages"])
    assert "<tool_response>" not in inside and inside.count("<tool_call>") == n_calls
    batch = trainer.data_collator([ex])
    assert batch["labels"][0].tolist() == ex["labels"]  # the loss sees exactly these tokens
    trainer.train()
    assert trainer.state.global_step == 2
    assert all(math.isfinite(h["loss"]) for h in trainer.state.log_history if "loss" in h)


# ---- the environment --------------------------------------------------------------------
def _replay(env, task):
    for turn in oracle_turns(task, gateway=True):
        for name, args in turn:
            assert json.loads(getattr(env, name)(**args))["success"] is not False
    env.finish(answer=task.answer or "")


def test_env_replays_the_reference_to_one_and_a_noop_to_zero(world) -> None:
    for row in world["rl"]["gateway"]:
        for kind, ref, noop in (("score", 1.0, 0.0), ("V", 1.0, 0.0), ("wildawm", 1.0, 0.0)):
            env = compoworld_env(kind)()
            env.reset(**row)
            _replay(env, env.task)
            assert env.get_reward() == ref
            after = json.loads(env.call_tool(tool="x__y", arguments={}))
            assert after["error"]["type"] == "finished"  # nothing changes after finish
            env.reset(**row)  # the same instance, reused as TRL pools it
            env.finish(answer="")
            assert env.get_reward() == noop and env.calls == 1
        silent = compoworld_env("wildawm")()
        silent.reset(**row)
        assert silent.get_reward() == -1.0  # never called finish: a format failure
        group = [compoworld_env("compoworld")() for _ in range(3)]
        for e in group:
            e.reset(**row)
        _replay(group[0], group[0].task)
        group[1].finish(answer="")
        assert compoworld_reward(environments=group) == [1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="--mode gateway"):
        CompoWorldEnv().reset(**world["rl"]["direct"][0])


def test_direct_environments_render_and_replay(world) -> None:
    rows, factories = direct_environments(world["rl"]["direct"])
    for row in rows:
        cls = factories[row["environment"]]
        env = cls()
        env.reset(**row)
        tools = [
            n for n, _ in inspect.getmembers(cls, inspect.isfunction) if n not in ("reset", "get_reward")
        ]
        tools = [n for n in tools if not n.startswith("_")]
        offered = [t["function"]["name"] for t in json.loads(row["tools"])]
        assert sorted(tools) == sorted(n for n in offered if n not in cls.left_out)
        for n in tools:  # what TRL renders into the prompt
            schema = get_json_schema(getattr(env, n))
            assert schema["function"]["name"] == n
        for turn in oracle_turns(env.task):
            for name, args in turn:
                getattr(env, name)(**args)
        env.finish(answer=env.task.answer or "")
        assert env.get_reward() == 1.0


# ---- GRPO -------------------------------------------------------------------------------
def test_grpo_one_step_with_the_environment_factory(world, tmp_path) -> None:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    row = min(world["rl"]["gateway"], key=lambda r: len(r["task"]))
    task = next(t for t in world["tasks"] if t.id == row["task_id"])
    tok = AutoTokenizer.from_pretrained(world["model"])
    args = GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=1,
        num_generations=2,
        per_device_train_batch_size=1,
        steps_per_generation=2,
        max_completion_length=16384,
        max_tool_calling_iterations=40,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
    )
    trainer = GRPOTrainer(
        model=scripted_model(world["model"], [task]),
        args=args,
        train_dataset=Dataset.from_list([row]),
        processing_class=tok,
        environment_factory=CompoWorldEnv,
    )
    trainer.train()
    rewards = list(trainer._logs["rewards"]["CompoWorldEnv"])
    firsts = [c[0]["tool_calls"][0]["function"]["name"] for c in trainer._logs["completion"]]
    assert sorted(zip(firsts, rewards, strict=True)) == [("finish", 0.0), ("list_services", 1.0)]
    logged = next(h for h in trainer.state.log_history if "frac_reward_zero_std" in h)
    assert logged["frac_reward_zero_std"] == 0.0 and logged["tools/failure_frequency"] == 0.0
    assert math.isfinite(logged["loss"])


def test_export_sft_command_prints_token_lengths(world, tmp_path) -> None:
    from typer.testing import CliRunner

    from compoworld.cli.main import app
    from compoworld.tasks.model import save_tasks

    runner = CliRunner()
    save_tasks(world["tasks"], tmp_path / "tasks.jsonl")
    r = runner.invoke(
        app,
        [
            "eval",
            "--tasks",
            str(tmp_path / "tasks.jsonl"),
            "--agent",
            "oracle",
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert r.exit_code == 0, r.output
    out = tmp_path / "sft.jsonl"
    base = ["export", "sft", "--runs", str(tmp_path / "run"), "--out", str(out), "--format", "trl"]
    r = runner.invoke(app, [*base, "--tokenizer", str(world["model"])])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    lengths = row_lengths(rows, AutoTokenizer.from_pretrained(world["model"]))
    text = " ".join(r.output.split())
    assert f"max {max(a for a, _ in lengths)};" in text and "(tokenizer)" in text
    assert f"at most {max(len(row['tools']) for row in rows)}" in text
    r = runner.invoke(app, [*base[:-1], "openai", "--tools", "offered"])
    assert r.exit_code == 2 and "over the 128" in " ".join(r.output.split())


def test_direct_rows_can_offer_only_the_tasks_own_tools(world) -> None:
    for ep, task in zip(world["direct"], world["tasks"], strict=True):
        ep = {**ep, "services": task.services}
        row = sft_record(ep, "trl", tools="task")
        names = [t["function"]["name"] for t in row["tools"]]
        called = {tc["function"]["name"] for m in row["messages"] for tc in m.get("tool_calls") or []}
        assert called <= set(names) and names[-1] == "finish"
        assert {n.split("__")[0] for n in names if "__" in n} == set(task.services)  # no distractor's
        assert len(names) < len(ep["offered"])
        assert row["messages"] == sft_record(ep, "trl", tools="offered")["messages"]  # as it ran
        (full, _), (lean, _) = row_lengths([sft_record(ep, "trl", tools="offered"), row])
        assert lean < full

"""TRL: CompoWorld tasks as `GRPOTrainer(environment_factory=...)` environments (TRL >= 1.16).

    from datasets import load_dataset
    from trl import GRPOConfig, GRPOTrainer
    from compoworld.integrations.trl import CompoWorldEnv

    # compoworld export rl --tasks tasks.jsonl --format trl --mode gateway --out rl.parquet
    ds = load_dataset("parquet", data_files="rl.parquet", split="train")
    GRPOTrainer(model, args=GRPOConfig(...), train_dataset=ds, environment_factory=CompoWorldEnv).train()

How TRL drives it (trl/trainer/grpo_trainer.py, 1.16):
- one instance per rollout, built once and pooled; before each rollout TRL calls `reset(**row)` with
  the dataset row as it is (`prompt`, `task_id`, `tools`, `task`, and any other column);
- every public method but `reset` and `get_reward` is a tool: TRL renders its schema from the type
  hints and the Google-style docstring, parses the model's tool calls with the tokenizer's response
  schema, and calls the bound method with the arguments; what it returns (a string here: the
  envelope as JSON) is the tool message;
- `get_reward()` is called once per finished rollout and added as a reward (weight 1, logged under
  the class name); reward functions also receive `environments`, the instances of the batch.

**Gateway mode** (`CompoWorldEnv`): the four meta-tools plus `finish`, the same five tools for every
task, so one class serves a dataset of any tasks. Export the rows with `--mode gateway`, so the
prompt's system message names the same tools; `reset` refuses a direct-mode row.

**Direct mode** (`direct_environments`): TRL 1.16 renders one tool list per environment class (it
lists a class's methods once, at init), and picks the class of a row by the row's `environment`
column when `environment_factory` is a dict. So direct mode is one class per service set, with one
method per tool of those services, built from the tools' JSON Schemas. That rendering is lossy
(nested objects become `object`, formats and bounds are dropped: Python hints are all TRL reads), a
tool with a parameter that is not a Python identifier is left out, and a task's 100 to 235 tools put
25k+ tokens in every prompt. Gateway mode has none of these limits; direct mode is for small
service sets (`--distractors 0`).

**Rewards** come from the verifier on the state the rollout left (`verify(task, snapshot, answer)`):
- `CompoWorldEnv` (`reward="score"`): the verifier's score, the weighted share of goal checks
  passed, 0 when a guard fails;
- `compoworld_env("V")`: 1 when every check passes, else 0;
- `compoworld_env("wildawm")`: WildAWM's format-aware reward, -1 on a format failure, else
  `min(1, V + 0.1/N * goal checks passed)`. A format failure is `rewards.format`'s, as in the runner
  and under verl: a rollout that never called `finish` (TRL ends a rollout at the first turn without
  a parsable tool call, so a malformed call, prose in place of a call and a generation cut off at
  `max_completion_length` all end that way; the prompt asks for `finish`, never for prose);
- `compoworld_env("compoworld")` with `reward_funcs=[compoworld_reward]`: CompoWorld's rubric reward,
  which weighs each check by how rarely the group passed it, so it is computed over the group, by a
  reward function. It groups the batch's rollouts by task. TRL hands each process its own slice of
  the generation batch: keep `per_device_train_batch_size * steps_per_generation` a multiple of
  `num_generations` so that every group lies on one process.

**Why no `rollout_func`.** `environment_factory` already runs the multi-turn loop inside the trainer
(tool calls parsed, tool results masked out of the loss, vLLM or transformers generation), and a
`rollout_func` would have to re-implement all of it, tokenisation and masks included, for the same
result. The episode loop of `compoworld eval` remains the way to roll out against an endpoint.
"""

from __future__ import annotations

import functools
import inspect
import json
import keyword
import re
import typing
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

from compoworld.core.envelope import envelope_text, failure
from compoworld.core.gateway import _MetaTools
from compoworld.integrations.verl import load_task
from compoworld.rewards import compoworld_group_rewards, episode_wildawm_reward, format_failed
from compoworld.tasks.model import Task
from compoworld.tasks.prompt import FINISH_TOOL
from compoworld.verify.verifier import VerifyResult, verify

REWARDS = ("score", "V", "wildawm", "compoworld")


def task_of_row(row: dict[str, Any]) -> Task:
    """The task of a row of `compoworld export rl` (`task`, or verl's `extra_info.task`)."""
    raw = row.get("task")
    if raw is None and isinstance(row.get("extra_info"), dict):
        raw = row["extra_info"].get("task")
    if raw is None:
        raise ValueError(
            "the row has no `task` column: use the rows of `compoworld export rl --format trl` "
            f"(columns here: {', '.join(sorted(row)) or 'none'})"
        )
    return load_task(raw)  # cached: the G rollouts of a prompt reset with the same row


def _row_tool_names(row: dict[str, Any]) -> list[str] | None:
    tools = row.get("tools")
    if tools is None and isinstance(row.get("extra_info"), dict):
        tools = row["extra_info"].get("tools")
    if isinstance(tools, str):
        try:
            tools = json.loads(tools)
        except json.JSONDecodeError:
            return None
    if not isinstance(tools, list):
        return None
    return [(t.get("function") or t).get("name", "") for t in tools if isinstance(t, dict)]


class _Episode:
    """The state every CompoWorld environment keeps over one rollout (no tools here)."""

    mode: ClassVar[str] = "gateway"

    def __init__(self) -> None:
        self.task: Task | None = None
        self._env: Any = None
        self.answer: str | None = None
        self.finished = False
        self.calls = 0
        self.errors = 0  # calls answered 400 or 404: arguments or names that do not exist
        self._result: VerifyResult | None = None

    def reset(self, **row: Any) -> None:
        """Start a rollout of the row's task in a fresh copy of its initial state."""
        task = task_of_row(row)
        self._check_row(task, row)
        self.task = task
        self._env = task.environment()
        self.answer, self.finished, self.calls, self.errors, self._result = None, False, 0, 0, None
        return None  # the row's prompt already holds the instruction

    def _check_row(self, task: Task, row: dict[str, Any]) -> None:
        names = _row_tool_names(row)
        if names is not None and ("call_tool" in names) != (self.mode == "gateway"):
            raise ValueError(
                f"task {task.id}: the row was exported for {'gateway' if 'call_tool' in names else 'direct'} "
                f"mode, this environment is {self.mode} mode: export with `compoworld export rl --format trl "
                f"--mode {self.mode}`"
            )

    def _record(self, result: dict[str, Any]) -> str:
        self.calls += 1
        if result.get("success") is False and result["error"]["code"] in (400, 404):
            self.errors += 1
        return envelope_text(result)

    def _closed(self) -> str | None:
        if self._env is None:
            return envelope_text(failure(409, "no_episode", "reset() was not called"))
        if self.finished:
            return envelope_text(failure(409, "finished", "finish was called: the episode is over"))
        return None

    def _finish(self, answer: Any) -> str:
        if (closed := self._closed()) is not None:
            return closed
        if not isinstance(answer, str):
            return self._record(failure(400, "invalid_arguments", 'finish takes {"answer": string}'))
        self.answer, self.finished = answer, True
        self.calls += 1
        return envelope_text({"success": True, "data": {"finished": True}})

    # ---- verification (properties and private names: TRL exposes every public method as a tool) --
    @property
    def verification(self) -> VerifyResult:
        """The verifier's result on the state the rollout left (computed once per rollout)."""
        if self.task is None:
            raise RuntimeError("reset() was not called")
        if self._result is None:
            self._result = verify(self.task, self._env.snapshot(), self.answer)
        return self._result

    @property
    def checks(self) -> list[dict[str, Any]]:
        return [c.model_dump() for c in self.verification.checks]

    def _reward_of(self, kind: str) -> float:
        if kind == "score":
            return float(self.verification.score)
        if kind == "V":
            return float(self.verification.V)
        if kind == "wildawm":  # TRL ends a rollout at its first turn without a parsable call
            r = self.verification
            return episode_wildawm_reward(not format_failed(self.finished), r.passed, self.checks)
        raise ValueError(f"unknown reward {kind!r}: expected score, V or wildawm (compoworld is per group)")


class _Gateway(_Episode):
    """The gateway's five tools, run by the environment's own gateway (`core.gateway`)."""

    def list_services(self) -> str:
        if (closed := self._closed()) is not None:
            return closed
        return self._record(self._env.gateway.call("list_services", {}))

    def list_tools(self, service: str) -> str:
        if (closed := self._closed()) is not None:
            return closed
        return self._record(self._env.gateway.call("list_tools", {"service": service}))

    def describe_tool(self, tool: str) -> str:
        if (closed := self._closed()) is not None:
            return closed
        return self._record(self._env.gateway.call("describe_tool", {"tool": tool}))

    def call_tool(self, tool: str, arguments: dict[str, Any] | None = None) -> str:
        if (closed := self._closed()) is not None:
            return closed
        return self._record(self._env.gateway.call("call_tool", {"tool": tool, "arguments": arguments}))

    def finish(self, answer: str) -> str:
        return self._finish(answer)


# The tools' descriptions are the gateway's and the finish tool's own, so the schema TRL renders says
# what `compoworld export rl --mode gateway` lists.
for _name in ("list_services", "list_tools", "describe_tool", "call_tool"):
    getattr(_Gateway, _name).__doc__ = getattr(_MetaTools, _name).__doc__
_Gateway.finish.__doc__ = (
    FINISH_TOOL["function"]["description"]
    + "\n\nArgs:\n    answer: "
    + FINISH_TOOL["function"]["parameters"]["properties"]["answer"]["description"]
)


class CompoWorldEnv(_Gateway):
    """A CompoWorld task in gateway mode; `get_reward()` is the verifier's score (see the module)."""

    reward: ClassVar[str] = "score"

    def get_reward(self) -> float:
        return self._reward_of(self.reward)


class CompoWorldGroupEnv(_Gateway):
    """Gateway mode without a per-rollout reward: pair it with `reward_funcs=[compoworld_reward]`."""


def compoworld_env(reward: str = "score") -> type:
    """The gateway environment class whose `get_reward` is `reward` (score, V or wildawm), or, for
    `compoworld`, the class without one, to pass with `reward_funcs=[compoworld_reward]`."""
    if reward not in REWARDS:
        raise ValueError(f"unknown reward {reward!r}: expected one of {', '.join(REWARDS)}")
    if reward == "compoworld":
        return CompoWorldGroupEnv
    if reward == "score":
        return CompoWorldEnv
    return type(
        f"CompoWorldEnv{reward.capitalize() if reward != 'V' else 'V'}", (CompoWorldEnv,), {"reward": reward}
    )


def make_compoworld_reward(lam: float = 0.01):
    """CompoWorld's rubric reward as a TRL reward function, lambda = `lam` (see `compoworld_reward`)."""

    def compoworld_reward(environments: list[_Episode] | None = None, **_: Any) -> list[float]:
        if environments is None:
            raise ValueError("compoworld_reward needs TRL's `environments`: use it with environment_factory")
        groups: dict[str, list[int]] = {}
        for i, e in enumerate(environments):
            if e.task is None:
                raise RuntimeError("an environment of the batch was never reset")
            groups.setdefault(e.task.id, []).append(i)
        out = [0.0] * len(environments)
        for idx in groups.values():
            for i, r in zip(
                idx, compoworld_group_rewards([environments[i].checks for i in idx], lam), strict=True
            ):
                out[i] = r
        return out

    return compoworld_reward


compoworld_reward = make_compoworld_reward()
compoworld_reward.__doc__ = """CompoWorld's rubric reward over each group of rollouts of one task in the batch:
R_i = sum_j w_j b_ij / sum_j w_j, w_j = lambda + (1 - p_j), p_j the group's pass rate of goal check j,
and 0 for a rollout that failed a guard (`rewards.compoworld_group_rewards`)."""


# ---- direct mode ------------------------------------------------------------------------
_PRIMITIVES = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict[str, Any]}


def _hint(schema: Any) -> Any:
    """A Python type hint that transformers' `get_json_schema` renders close to `schema`."""
    if not isinstance(schema, dict):
        return Any
    if (
        isinstance(schema.get("enum"), list)
        and schema["enum"]
        and all(isinstance(v, str | int | float | bool) for v in schema["enum"])
    ):
        return Literal[tuple(schema["enum"])]
    t = schema.get("type")
    if isinstance(t, list):
        parts = [_hint({**schema, "type": x}) for x in t if x != "null"]
        hint = typing.Union[tuple(parts)] if len(parts) > 1 else (parts[0] if parts else Any)  # noqa: UP007
        return typing.Optional[hint] if "null" in t else hint  # noqa: UP045
    if t == "array":
        return list[_hint(schema.get("items"))]
    if t in _PRIMITIVES:
        return _PRIMITIVES[t]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            nulls = any(isinstance(s, dict) and s.get("type") == "null" for s in schema[key])
            parts = [_hint(s) for s in schema[key] if not (isinstance(s, dict) and s.get("type") == "null")]
            if Any in parts or not parts:
                return Any
            hint = typing.Union[tuple(parts)] if len(parts) > 1 else parts[0]  # noqa: UP007
            return typing.Optional[hint] if nulls else hint  # noqa: UP045
    return Any


def _one_line(text: Any) -> str:
    # Google-docstring parsing splits on "Args:" / "Returns:" and on "name:" lines: keep them out
    text = re.sub(r"\s+", " ", str(text or "")).strip()
    return re.sub(r"\b(Args|Returns|Raises):", r"\1 -", text) or "-"


def _direct_method(full: str, spec: Any):
    props = spec.input_schema.get("properties") or {}
    required = set(spec.input_schema.get("required") or ())
    if any(not p.isidentifier() or keyword.iskeyword(p) or p == "self" for p in props):
        return None  # TRL calls tools as fn(**arguments): such a parameter has no Python form

    def method(self: _Direct, **arguments: Any) -> str:
        if (closed := self._closed()) is not None:
            return closed
        return self._record(self._env.call(full, arguments))

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    ann = {}
    for p, s in sorted(props.items(), key=lambda kv: kv[0] not in required):
        ann[p] = _hint(s)
        default = inspect.Parameter.empty if p in required else None
        params.append(
            inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=ann[p])
        )
    method.__name__ = method.__qualname__ = full
    method.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    method.__annotations__ = ann
    args = "".join(
        f"\n    {p}: {_one_line(s.get('description') if isinstance(s, dict) else '') if isinstance(s, dict) and s.get('description') else p}"
        for p, s in props.items()
    )
    method.__doc__ = _one_line(spec.description) + (f"\n\nArgs:{args}" if props else "")
    return method


class _Direct(_Episode):
    mode: ClassVar[str] = "direct"
    services: ClassVar[tuple[str, ...]] = ()
    left_out: ClassVar[tuple[str, ...]] = ()  # tools with a parameter that is not a Python identifier
    reward: ClassVar[str] = "score"

    def _check_row(self, task: Task, row: dict[str, Any]) -> None:
        super()._check_row(task, row)
        if tuple(task.all_services) != self.services:
            raise ValueError(
                f"task {task.id} has services {', '.join(task.all_services)}, this environment "
                f"{', '.join(self.services)}: give the row the `environment` column of direct_environments"
            )

    def finish(self, answer: str) -> str:
        return self._finish(answer)

    def get_reward(self) -> float:
        return self._reward_of(self.reward)


_Direct.finish.__doc__ = _Gateway.finish.__doc__


def environment_name(services: Iterable[str]) -> str:
    """The `environment` column value of a direct-mode row: its services, in the task's order."""
    return "+".join(services)


@functools.lru_cache(maxsize=128)
def direct_environment(services: tuple[str, ...], reward: str = "score") -> type:
    """A class with one method per tool of `services` (the task's and its distractors) plus `finish`."""
    from compoworld.core.environment import full_name
    from compoworld.services import registry

    if reward not in ("score", "V", "wildawm"):
        raise ValueError(f"unknown reward {reward!r} for direct mode: expected score, V or wildawm")
    reg = registry()
    members: dict[str, Any] = {"services": tuple(services), "reward": reward}
    left_out = []
    for s in services:
        if s not in reg:
            raise ValueError(f"unknown service {s!r}")
        for t, spec in reg[s].tool_specs.items():
            full = full_name(s, t)
            m = _direct_method(full, spec)
            if m is None:
                left_out.append(full)
            else:
                members[full] = m
    members["left_out"] = tuple(left_out)
    return type("CompoWorldDirectEnv", (_Direct,), members)


def direct_environments(
    rows: Iterable[dict[str, Any]], reward: str = "score"
) -> tuple[list[dict[str, Any]], dict[str, type]]:
    """Rows of `export rl --format trl --mode direct` with an `environment` column, and the dict to
    pass as `environment_factory` (one class per service set)."""
    out, factories = [], {}
    for row in rows:
        task = task_of_row(row)
        name = environment_name(task.all_services)
        factories.setdefault(name, direct_environment(tuple(task.all_services), reward))
        out.append({**row, "environment": name})
    return out, factories


__all__ = [
    "REWARDS",
    "CompoWorldEnv",
    "CompoWorldGroupEnv",
    "compoworld_env",
    "compoworld_reward",
    "direct_environment",
    "direct_environments",
    "environment_name",
    "make_compoworld_reward",
    "task_of_row",
]

"""verl adapter: a `BaseTool` for verl's `ToolAgentLoop`, its tool config, and a reward function.

    compoworld export rl --tasks T.jsonl --format verl --mode gateway --out train.parquet
    compoworld export verl-tools --mode gateway --out tool_config.yaml
    python -m verl.trainer.main_ppo data.train_files=train.parquet \\
        actor_rollout_ref.rollout.multi_turn.enable=True \\
        actor_rollout_ref.rollout.multi_turn.tool_config_path=tool_config.yaml \\
        custom_reward_function.path=pkg://compoworld.integrations.verl custom_reward_function.name=compute_score

What verl 0.9 does, and what this module does about it (paths under `verl/`):
- `tools/tool_registry.py` `initialize_tools_from_config` makes one tool object per YAML entry, once per
  agent-loop worker, from `class_name`, `config` (`type: native`) and `tool_schema`. So one class,
  `CompoWorldTool`, serves every tool: an entry per task tool (direct mode) or per meta-tool (gateway
  mode), plus `finish`; its `config` carries the mode and the reward.
- `experimental/agent_loop/tool_agent_loop.py` `_call_tool` (l. 484-496) runs every single call as
  `create(create_kwargs=tools_kwargs[name]["create_kwargs"])` -> `execute(instance_id, args,
  agent_data=agent_data)` -> `release(instance_id)`: an instance lives for one call, and `create` sees
  no rollout. The rollout's environment is therefore keyed by `agent_data.request_id` (l. 142, 145)
  in a store that every `CompoWorldTool` of the process shares, made on the rollout's first call and
  dropped when its `AgentData` is garbage-collected (verl has no end-of-rollout hook). The key holds the
  `AgentData`'s identity too: `full_determinism` ids (`det-{priority}`, l. 128) repeat at every step. `release` frees the call's instance, and the rollout's state when the rollout
  was keyed by the instance itself (a driver that passes no `agent_data`).
- The task comes from `create_kwargs["task"]`. The RL export puts it once per row, in `finish`'s
  `create_kwargs` (every rollout is offered `finish`); a tool whose own `create_kwargs` lack it finds it
  in `agent_data.tools_kwargs` (the row's `extra_info.tools_kwargs`, `utils/dataset/rl_dataset.py` l. 403).
- Step rewards go to `agent_data.tool_rewards` (l. 375); `finish` reports the rollout's reward, other
  calls 0. Every call leaves the rollout's record (the log of the calls the tool ran, and the
  verifier's verdict once `finish` ran) in `agent_data.extra_fields["extras"]["compoworld"]` (`extras`
  is one of the keys verl keeps for every rollout, `agent_loop.py` l. 1122-1128, so batches of workers
  concatenate), and the reward loop merges those fields into the reward function's `extra_info`
  (`experimental/reward_loop/reward_manager/naive.py` l. 45-47; the legacy `workers/reward_manager`
  does not, so there the text is read).
- The reward function is called as `compute_score(data_source=, solution_str=, ground_truth=,
  extra_info=, **reward_kwargs)` (`naive.py` l. 66-84, `trainer/ppo/reward.py` l. 50-86), with
  `solution_str` the decoded response: tool calls in the chat template's form and tool results.
  `compute_score` uses the tool's verdict when there is one, else replays the text's calls on a fresh
  copy of the task. Either way the reward is the verifier's, from state.

Nothing the agent sees carries ground truth: tool results are the services' envelopes, and `finish`
answers `{"finished": true}`. The verdict and the rewards go to the trainer only.

The rollout's reward (`reward=`, in the tool's config and in `compute_score`'s `reward_kwargs`):
`score` (the verifier's partial score: goal checks' weighted share, 0 when a guard fails), `V` (1 when
every check passes), or `wildawm` (-1 on a format failure, else min(1, V + 0.1/N sum v_i) over the N goal
checks). CompoWorld's rubric reward weighs checks by the group's pass rates, so it needs every rollout of
a group at once; verl's reward function sees one rollout, and `score` is that reward with equal weights.

A format failure is `rewards.format`'s, the same as the runner's and TRL's: the rollout never called
`finish`, or `MAX_MALFORMED_TURNS` assistant turns in a row had only unusable calls (not JSON, unknown
tool, a gateway call answered 404).

**Scored from what ran.** Every call the tool runs is logged, with its turn, in the rollout's
`extra_fields["extras"]["compoworld"]` (with the verdict once `finish` ran); `compute_score` scores
that log (`from_log`). A model that writes `<tool_response>` blocks itself gains nothing: verl's
parser still finds only its calls, verl runs the first `max_parallel_calls` of them, and the log holds
exactly those. Only without a log is the text read (`from_text`), counting no response verl's runner
did not produce (`replay_text`).
"""

from __future__ import annotations

import json
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import count
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from compoworld.core.envelope import envelope_text, failure
from compoworld.rewards import episode_wildawm_reward, format_failed, longest_malformed_run
from compoworld.rewards.format import MAX_MALFORMED_TURNS  # noqa: F401 (kept importable from here)
from compoworld.tasks.model import Task
from compoworld.tasks.prompt import FINISH, FINISH_TOOL

DATA_SOURCE = "compoworld"
AGENT_NAME = "tool_agent"  # verl's ToolAgentLoop (`@register("tool_agent")`)
TOOL_CLASS = "compoworld.integrations.verl.CompoWorldTool"
MODES = ("direct", "gateway")
REWARDS = ("score", "V", "wildawm")
EXTRAS = "extras"  # the AgentData.extra_fields key verl keeps for every rollout
VERDICT = "compoworld"  # our entry under it
MAX_ROLLOUTS = 8192  # live rollouts kept without an AgentData to free them (explicit drivers)

_FINISHED = {"success": True, "data": {"finished": True}}


def _check_choice(what: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r}: expected one of {', '.join(choices)}")
    return value


# ---- tasks -------------------------------------------------------------------------------------
_TASKS: OrderedDict[str, Task] = OrderedDict()  # parsed tasks by their text: GRPO rolls each N times
_TASKS_LOCK = threading.Lock()


def load_task(source: Task | Mapping[str, Any] | str | bytes) -> Task:
    """A task from what a row carries: a `Task`, its dict, or its JSON text (full, or a task-file line
    whose s0 is a patch on the seeded base world)."""
    if isinstance(source, Task):
        return source
    if isinstance(source, Mapping):
        from compoworld.verify.verifier import _task_of

        return _task_of(dict(source))
    if not isinstance(source, str | bytes):
        raise ValueError(f"a task must be JSON text or a dict, got {type(source).__name__}")
    key = source if isinstance(source, str) else source.decode()
    with _TASKS_LOCK:
        hit = _TASKS.get(key)
        if hit is not None:
            _TASKS.move_to_end(key)
            return hit
    try:
        data = orjson.loads(key)
    except orjson.JSONDecodeError as e:
        raise ValueError(f"the task is not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise ValueError("the task must be a JSON object")
    from compoworld.verify.verifier import _task_of

    task = _task_of(data)
    with _TASKS_LOCK:
        _TASKS[key] = task
        while len(_TASKS) > 256:
            _TASKS.popitem(last=False)
    return task


def _mode_tools(mode: str) -> dict[str, Any]:
    from compoworld.core.gateway import SPECS

    return SPECS if mode == "gateway" else {}


# ---- one rollout -------------------------------------------------------------------------------
class Rollout:
    """One rollout's episode: its environment, the answer, the usability of each turn's calls, and
    the log of the calls it ran (what `compute_score` scores from, in any process).

    (Plain classes, no dataclasses, in this module: verl loads a reward function from its file path
    without registering the module, and dataclasses look their module up.)"""

    def __init__(self, task: Task, offered: frozenset[str] | None = None, keep_state: bool = False) -> None:
        self.task = task
        self.offered = offered  # the tool names the rollout was offered (None: any)
        self.env: Any = task.environment()
        self.keep_state = keep_state  # keep the environment after `finish` (replays fork it)
        self.answer: str | None = None
        self.done = False
        self.verdict: dict[str, Any] | None = None
        self.turns: dict[int, bool] = {}  # turn -> some call of it was usable
        self.turn = 0  # the latest turn seen
        self.log: list[list[Any]] = []  # [name, arguments, turn] of every call that reached the tool

    def fork(self) -> Rollout:
        """An independent copy of this rollout as it stands (state, answer, turns, log)."""
        other = Rollout.__new__(Rollout)
        other.__dict__.update(self.__dict__)
        other.turns, other.log = dict(self.turns), list(self.log)
        if self.env is not None:
            other.env = self.task.environment()
            other.env.restore(self.env.snapshot())
        return other

    def call(self, name: Any, arguments: Any, turn: int | None = None) -> dict[str, Any]:
        """Run one call of turn `turn` (default: a turn of its own) and return its envelope."""
        self.turn = self.turn + 1 if turn is None else max(turn, self.turn)
        t = self.turn
        self.turns.setdefault(t, False)
        self.log.append([name, arguments, t])
        if self.done:
            return failure(409, "episode_finished", "The task is finished: `finish` was already called.")
        result, usable = self._run(name, arguments)
        if usable:
            self.turns[t] = True
        return result

    def malformed_turn(self, turn: int | None = None) -> None:
        """A turn whose calls never reached a tool (not JSON, no such tool)."""
        self.turn = self.turn + 1 if turn is None else max(turn, self.turn)
        self.turns.setdefault(self.turn, False)

    def _run(self, name: Any, arguments: Any) -> tuple[dict[str, Any], bool]:
        if name == FINISH:
            answer = arguments.get("answer", "") if isinstance(arguments, dict) else None
            if not isinstance(answer, str):
                return failure(400, "invalid_arguments", 'finish takes {"answer": string}'), False
            self.answer, self.done = answer, True
            self.turns[self.turn] = True
            self.verdict = self._verdict()
            if not self.keep_state:
                self.env = None  # no longer needed: the verdict holds what the trainer gets
            return dict(_FINISHED), True
        if not isinstance(name, str) or (self.offered is not None and name not in self.offered):
            return failure(404, "unknown_tool", f"Unknown tool {str(name)[:100]!r}."), False
        if name in _mode_tools("gateway"):  # a meta-tool: one that answers 404 goes nowhere
            result = self.env.gateway.call(name, arguments)
            return result, not (result.get("success") is False and result["error"]["code"] == 404)
        result = self.env.call(name, arguments)
        bad = result.get("success") is False and result["error"]["type"] == "unknown_tool"
        return result, not bad

    def format_ok(self) -> bool:
        """Not a format failure (`rewards.format`): `finish` ran, and no run of unusable turns (a
        turn never seen had only calls that never reached the tool)."""
        usable = [self.turns.get(t, False) for t in range(1, self.turn + 1)]
        return not format_failed(self.done, longest_malformed_run(usable))

    def _verdict(self) -> dict[str, Any]:
        from compoworld.verify.verifier import verify

        r = verify(self.task, self.env.snapshot(), self.answer)
        return {
            "task_id": self.task.id,
            "score": r.score,
            "V": r.V,
            "format_ok": self.format_ok(),
            "finished": self.done,
            "checks": [{"id": c.id, "passed": c.passed, "kind": c.kind} for c in r.checks],
        }

    def result(self) -> dict[str, Any]:
        """The verdict: at `finish`, or of the state now (no answer) for a rollout still going."""
        if self.verdict is not None:
            return self.verdict
        if self.env is None:
            raise RuntimeError("this rollout's state was released before it finished")
        return self._verdict()

    def record(self) -> dict[str, Any]:
        """What the tool leaves for the reward function: the task, the log of the calls it ran (with
        their turns) and, once `finish` ran, the verdict. Plain JSON-able data."""
        return {"task_id": self.task.id, "log": self.log, "verdict": self.verdict}


def replay_log(task: Task, log: Iterable[Any]) -> dict[str, Any]:
    """The verdict of a rollout from the tool's log of the calls it ran ([name, arguments, turn]):
    the same calls, in the same order, on a fresh copy of the task (the environment is
    deterministic, so this is the state the rollout left)."""
    r = Rollout(task)
    for entry in log:
        name, arguments, turn = (list(entry) + [None, None, None])[:3]
        r.call(name, arguments, turn=turn if isinstance(turn, int) and turn > 0 else None)
    return r.result()


def reward_of(verdict: Mapping[str, Any], reward: str = "score") -> float:
    """The rollout's reward from a verdict: the verifier's score, V, or WildAWM's reward."""
    _check_choice("reward", reward, REWARDS)
    if reward == "score":
        return float(verdict["score"])
    if reward == "V":
        return float(verdict["V"])
    return episode_wildawm_reward(bool(verdict["format_ok"]), bool(verdict["V"]), verdict["checks"])


# ---- the text verl passes (the fallback when no log exists) --------------------------------------
_OPEN_CALL, _CLOSE_CALL = "<tool_call>", "</tool_call>"
_OPEN_RESP, _CLOSE_RESP = "<tool_response>", "</tool_response>"
_ROLE = re.compile(r"^\s*(assistant|user)\s*\n", re.IGNORECASE)
_BETWEEN = re.compile(r"\s*(?:(?:assistant|user|tool)\s*\n\s*)*", re.IGNORECASE)
MALFORMED = object()  # a tool call that does not parse
_RESULT_KEYS = ("success", "finished")  # what a bare tool result (an envelope, finish's reply) carries
MAX_READINGS = 64  # readings of an ambiguous text tried before it is scored as if nothing ran
MAX_GROUPS = 512  # response groups a text may hold (verl's turn budgets are far below): past it, hostile
_TRUNC_RIGHT, _TRUNC_LEFT, _TRUNC_MID = "...(truncated)", "(truncated)...", "...(truncated)..."


def format_tool_call(name: str, arguments: Any) -> str:
    """One call as the hermes template writes it (and verl's hermes parser reads it)."""
    return (
        "<tool_call>\n"
        + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        + "\n</tool_call>"
    )


def _parse_call(body: str) -> Any:
    # as verl's HermesToolParser: json.loads, then ["name"] and ["arguments"] (a call without them is dropped)
    try:
        obj = json.loads(body)
        name, args = obj["name"], obj["arguments"]
    except Exception:  # malformed, too deep (RecursionError), not an object
        return MALFORMED
    return (name, args) if isinstance(name, str) else MALFORMED


class _Group(NamedTuple):
    start: int  # where the group's first response opens
    end: int  # where its last one closes
    bodies: list[str]


class _Text:
    """A decoded response, read the way verl's runner produced it: the candidate tool-response
    groups (runs of responses with only whitespace and role markers between them), and the tool
    calls of any span exactly as verl's hermes parser finds them in a generation (every
    `<tool_call>...</tool_call>` of the span, shortest match first, those inside a response the
    model wrote itself included). Linear scans only: hostile text cannot make it quadratic."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.bare = _OPEN_CALL not in text and _OPEN_RESP not in text
        self.groups: list[_Group] = []
        self._bare_calls: list[tuple[int, int, Any]] = []
        spans = self._bare_scan() if self.bare else self._response_spans()
        for s, e, body in spans:
            last = self.groups[-1] if self.groups else None
            if last is not None and _BETWEEN.fullmatch(text, last.end, s):
                self.groups[-1] = _Group(last.start, e, [*last.bodies, body])
            else:
                self.groups.append(_Group(s, e, [body]))

    def _response_spans(self) -> list[tuple[int, int, str]]:
        out, t, i = [], self.text, 0
        while (s := t.find(_OPEN_RESP, i)) != -1:
            e = t.find(_CLOSE_RESP, s + len(_OPEN_RESP))
            if e == -1:
                break  # never closed: the rest is the model's text
            out.append((s, e + len(_CLOSE_RESP), t[s + len(_OPEN_RESP) : e]))
            i = e + len(_CLOSE_RESP)
        return out

    def _bare_scan(self) -> list[tuple[int, int, str]]:
        """Where the tokenizer dropped the markup (the tags are special tokens of the template):
        calls are bare {"name", "arguments"} objects, responses bare envelopes."""
        dec, t, out = json.JSONDecoder(), self.text, []
        pos = t.find("{")
        while pos != -1:
            try:
                obj, end = dec.raw_decode(t, pos)
            except (ValueError, RecursionError):  # not JSON, or nested past what Python parses
                pos = t.find("{", pos + 1)
                continue
            if isinstance(obj, dict) and "name" in obj and "arguments" in obj:
                name = obj["name"]
                self._bare_calls.append(
                    (pos, end, (name, obj["arguments"]) if isinstance(name, str) else MALFORMED)
                )
            elif isinstance(obj, dict) and any(k in obj for k in _RESULT_KEYS):
                out.append((pos, end, t[pos:end]))
            pos = t.find("{", end)
        return out

    def calls(self, start: int, stop: int) -> list[Any]:
        """The calls verl's parser finds in text[start:stop] (one generation)."""
        if self.bare:
            return [c for s, e, c in self._bare_calls if s >= start and e <= stop]
        out, t, i = [], self.text, start
        while (o := t.find(_OPEN_CALL, i, stop)) != -1:
            c = t.find(_CLOSE_CALL, o + len(_OPEN_CALL), stop)
            if c == -1 or c + len(_CLOSE_CALL) > stop:
                break  # no later open can close either
            out.append(_parse_call(t[o + len(_OPEN_CALL) : c]))
            i = c + len(_CLOSE_CALL)
        return out


def _response_is(body: str, full: str, limit: int | None) -> bool:
    """Whether a response block holds exactly the text verl's runner puts there for a result
    `full`: as it is, or cut to `limit` characters the way `_call_tool` cuts it (any of its three
    sides; at any length when `limit` is not known)."""
    b = body.strip()
    if b == full:
        return True
    if limit is not None and len(full) <= limit:
        return False
    for mark, keep in ((_TRUNC_MID, None), (_TRUNC_RIGHT, "head"), (_TRUNC_LEFT, "tail")):
        if keep is None and mark in b:
            head, _, tail = b.partition(mark)
            n = len(head)
            fits = n == len(tail) and n > 0 and (limit is None or n == limit // 2)
            if fits and full.startswith(head) and full.endswith(tail) and 2 * n < len(full):
                return True
        elif keep == "head" and b.endswith(mark):
            head = b[: -len(mark)]
            if (limit is None or len(head) == limit) and len(head) < len(full) and full.startswith(head):
                return True
        elif keep == "tail" and b.startswith(mark):
            tail = b[len(mark) :]
            if (limit is None or len(tail) == limit) and len(tail) < len(full) and full.endswith(tail):
                return True
    return False


def _run_round(
    r: Rollout, calls: list[Any], bodies: list[str], cap: int | None, limit: int | None
) -> Rollout | None:
    """The rollout after verl ran this generation's calls, if `bodies` are exactly the responses
    verl's runner gives them (one per call it ran, the first `cap`, in order); else None."""
    parsed = [c for c in calls if c is not MALFORMED]
    k = len(bodies)
    if not parsed or k > len(parsed) or (cap is not None and k != min(len(parsed), cap)):
        return None
    nxt = r.fork()
    nxt.malformed_turn()  # opens the generation's turn; a usable call below marks it usable
    for (name, args), body in zip(parsed[:k], bodies, strict=True):
        if nxt.offered is not None and name not in nxt.offered:
            # verl's own answer to a tool it was not given (tool_agent_loop `_call_tool`)
            ok = body.strip().startswith(f"Unknown function '{name}'")
            nxt.malformed_turn(nxt.turn)
        else:
            result = nxt.call(name, args, turn=nxt.turn)
            ok = _same_result(body, result, limit)
        if not ok:
            return None
    return nxt


def _same_result(body: str, result: Mapping[str, Any], limit: int | None) -> bool:
    """`body` is the response verl's runner gives for `result`: the same JSON (key order aside: a
    task loaded from its file lists a record's fields sorted), or its text cut as verl cuts it."""
    try:
        if json.loads(body) == json.loads(envelope_text(result)):
            return True
    except (ValueError, RecursionError):
        pass
    texts = {
        envelope_text(result),
        json.dumps(result, sort_keys=True, ensure_ascii=False, separators=(",", ":")),
    }
    return any(_response_is(body, t, limit) for t in texts)


def replay_text(
    task: Task,
    text: str,
    offered: Iterable[str] | None = None,
    *,
    num_turns: int | None = None,
    max_parallel_calls: int | None = None,
    max_tool_response_length: int | None = None,
    reward: str = "score",
) -> dict[str, Any]:
    """Replay a decoded response's tool calls on a fresh copy of `task`, counting only the tool
    responses verl's runner produced; returns the verdict (with `readings`, how many readings of
    the text were consistent).

    A response group counts as verl's only where it is exactly what verl's runner answers: one
    response per call it ran (the generation's first `max_parallel_calls`), each the very envelope
    the replayed call returns (cut as verl cuts at `max_tool_response_length`). Anything else is
    text the model wrote: its calls stay in the generation (verl's parser sees them) and never ran
    unless a real response follows. With `num_turns` (verl's count: user turns + assistant turns +
    1), exactly `(num_turns - 2) // 2` groups are real; where several choices fit (a model that wrote
    a byte-exact envelope itself), and for the last generation's calls (never run, or run with
    their responses cut off by the response length), the lowest reward of the readings is taken, so
    the fallback never scores above the state the rollout really left. After a capped turn the
    rollout goes on to the next generation. The answer is `finish`'s: prose is no answer."""
    doc = _Text(text)
    rounds = None if num_turns is None else max(0, (int(num_turns) - 2) // 2)
    start = Rollout(task, frozenset(offered) if offered is not None else None, keep_state=True)
    finals: list[dict[str, Any]] = []
    budget = [MAX_READINGS]  # complete readings left to try; below 0: too ambiguous

    def finish_reading(r: Rollout, gen_start: int) -> None:
        calls = [c for c in doc.calls(gen_start, len(doc.text)) if c is not MALFORMED]
        if calls or doc.calls(gen_start, len(doc.text)):
            r.malformed_turn()
        finals.append(r.result())
        run = r.fork()  # the reading in which verl ran them and the response length cut their results
        for name, args in calls[: max_parallel_calls or len(calls)]:
            run.call(name, args, turn=run.turn)
            finals.append(run.result())

    def walk(r: Rollout, gen_start: int, i: int, left: int | None) -> None:
        if budget[0] < 0:
            return
        if i == len(doc.groups):
            if left in (None, 0):
                budget[0] -= 1
                if budget[0] >= 0:
                    finish_reading(r, gen_start)
            return
        g = doc.groups[i]
        if left != 0:
            calls = doc.calls(gen_start, g.start)
            nxt = _run_round(r, calls, g.bodies, max_parallel_calls, max_tool_response_length)
            if nxt is not None:
                walk(nxt, g.end, i + 1, None if left is None else left - 1)
                if left is None:
                    return  # verl's count unknown: a group that fits is taken as verl's
        if left is None or len(doc.groups) - i - 1 >= left:
            walk(r, gen_start, i + 1, left)  # the model wrote this group: it is part of the generation

    if len(doc.groups) > MAX_GROUPS:  # no rollout verl ran looks like this: scored as if nothing ran
        return {**Rollout(task).result(), "readings": 0}
    walk(start, 0, 0, rounds)
    if not finals and rounds is not None:  # the text does not fit verl's count: read it without
        budget[0] = MAX_READINGS
        walk(start, 0, 0, None)
    if not finals or budget[0] < 0:  # unreadable or too ambiguous: scored as if nothing ran
        finals = [Rollout(task).result()]
    worst = min(finals, key=lambda v: reward_of(v, reward))
    return {**worst, "readings": len(finals)}


def _record_of(info: Mapping[str, Any]) -> Mapping[str, Any] | None:
    extras = info.get(EXTRAS)
    entry = extras.get(VERDICT) if isinstance(extras, Mapping) else None
    if not isinstance(entry, Mapping):
        return None
    if "log" not in entry and "score" in entry:  # a bare verdict (older tool versions)
        return {"task_id": entry.get("task_id"), "log": None, "verdict": entry}
    return entry


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any = None,
    extra_info: Mapping[str, Any] | None = None,
    reward: str = "score",
    source: str = "auto",
    max_parallel_calls: int | None = None,
    max_tool_response_length: int | None = None,
    **kwargs: Any,
) -> float | dict[str, float]:
    """verl's custom reward function (`custom_reward_function.path=pkg://compoworld.integrations.verl`,
    `name=compute_score`; `custom_reward_function.reward_kwargs.reward=score|V|wildawm`).

    For rows of `data_source` "compoworld" (`export rl --format verl`), the verifier's reward of the
    state the rollout left, **from the tool's log** where one exists: `CompoWorldTool` leaves, in the
    rollout's `extra_fields` (which verl's reward loop merges into `extra_info`), the calls it ran
    and, at `finish`, its verdict; a rollout that never finished is scored by replaying the log on a
    fresh copy of the task. Without a log (verl's legacy reward manager, which does not pass the
    rollout's fields, or `source="text"`), `replay_text` reads `solution_str` and counts only the
    tool responses verl's runner produced (see it; `reward_kwargs` `max_parallel_calls` and
    `max_tool_response_length` make it exact, `extra_info["num_turns"]` comes from verl). Returns a
    dict (verl logs its keys): `score` (the reward), `verifier_score`, `V`, `format_ok`, `from_log`,
    `from_text`. Other data sources go to verl's `default_compute_score`.
    """
    if data_source != DATA_SOURCE:
        from verl.utils.reward_score import default_compute_score

        return default_compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)
    _check_choice("reward", reward, REWARDS)
    _check_choice("source", source, ("auto", "text"))
    info = extra_info or {}
    verdict = None
    record = _record_of(info) if source == "auto" else None
    if record is not None:
        if info.get("task_id") not in (None, record.get("task_id")):
            raise ValueError(
                f"compute_score: the tool's log is for task {record.get('task_id')!r}, the row is "
                f"{info.get('task_id')!r}"
            )
        verdict = record.get("verdict")
        if verdict is None and record.get("log") is not None:
            verdict = replay_log(_row_task(info), record["log"])
    from_log = verdict is not None
    if verdict is None:
        task = _row_task(info)
        mode = _check_choice("mode", info.get("mode") or "direct", MODES)
        offered = info.get("tool_selection")
        if mode == "gateway":
            offered = [*_mode_tools("gateway"), FINISH]
        elif offered is None:
            offered = [*_tool_names(task.all_services), FINISH]
        verdict = replay_text(
            task,
            solution_str or "",
            offered,
            num_turns=_int_or_none(info.get("num_turns")),
            max_parallel_calls=_int_or_none(max_parallel_calls),
            max_tool_response_length=_int_or_none(max_tool_response_length),
            reward=reward,
        )
    return {
        "score": reward_of(verdict, reward),
        "verifier_score": float(verdict["score"]),
        "V": float(verdict["V"]),
        "format_ok": float(bool(verdict["format_ok"])),
        "from_log": float(from_log),
        "from_text": float(not from_log),
    }


def _row_task(info: Mapping[str, Any]) -> Task:
    if "task" not in info:
        raise ValueError(
            "compute_score: extra_info has no 'task' (export the rows with `compoworld export rl --format verl`)"
        )
    return load_task(info["task"])


# ---- the tool config -----------------------------------------------------------------------------
def _tool_names(services: Iterable[str]) -> list[str]:
    from compoworld.core.environment import full_name
    from compoworld.services import registry

    reg = registry()
    return [full_name(s, t) for s in dict.fromkeys(services) for t in reg[s].tool_specs]


def tool_schemas(mode: str, services: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The OpenAI tool schemas of a mode: the meta-tools (gateway) or `services`' tools (direct),
    then `finish`."""
    from compoworld.core.environment import full_name, tool_entry
    from compoworld.services import registry

    _check_choice("mode", mode, MODES)
    if mode == "gateway":
        tools = [tool_entry(n, s, "openai") for n, s in _mode_tools("gateway").items()]
    else:
        reg = registry()
        unknown = [s for s in services if s not in reg]
        if unknown:
            raise ValueError(f"unknown service(s) {', '.join(unknown)}; known: {', '.join(reg)}")
        tools = [
            tool_entry(full_name(s, t), spec, "openai")
            for s in dict.fromkeys(services)
            for t, spec in reg[s].tool_specs.items()
        ]
    return [*tools, FINISH_TOOL]


def tool_config(mode: str = "gateway", tasks: Iterable[Task] = (), reward: str = "score") -> dict[str, Any]:
    """verl's tool config: one `CompoWorldTool` entry per tool the rows can be offered (direct mode:
    every tool of the tasks' services and distractors; rows pick theirs by `tool_selection`)."""
    _check_choice("reward", reward, REWARDS)
    services = [s for t in tasks for s in t.all_services]
    if mode == "direct" and not services:
        raise ValueError("a direct-mode tool config needs the tasks (their services name the tools)")
    return {
        "tools": [
            {
                "class_name": TOOL_CLASS,
                "config": {"type": "native", "mode": mode, "reward": reward},
                "tool_schema": schema,
            }
            for schema in tool_schemas(mode, services)
        ]
    }


def write_tool_config(path: str | Path, config: Mapping[str, Any]) -> Path:
    """Write the config as YAML (JSON, which is YAML too, where PyYAML is missing)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    try:
        import yaml
    except ImportError:
        text = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
    else:
        head = "# verl tool config written by `compoworld export verl-tools`\n"
        text = head + yaml.safe_dump(dict(config), sort_keys=False, allow_unicode=True, width=1000)
    p.write_text(text, encoding="utf-8")
    return p


def row_columns(task: Task, mode: str) -> dict[str, Any]:
    """The columns verl's agent loop reads from an RL row: `agent_name` and, for `extra_info`,
    `mode`, `tools_kwargs` (the task once, in `finish`'s `create_kwargs`; a `task_id` in every offered
    tool's) and, in direct mode, `tool_selection` (the tools of the task's services, and `finish`)."""
    _check_choice("mode", mode, MODES)
    meta = list(_mode_tools("gateway")) if mode == "gateway" else _tool_names(task.all_services)
    names = [*meta, FINISH]
    kwargs: dict[str, Any] = {n: {"create_kwargs": {"task_id": task.id}} for n in names}
    kwargs[FINISH] = {"create_kwargs": {"task_id": task.id, "task": task.to_line().decode()}}
    extra: dict[str, Any] = {"mode": mode, "tools_kwargs": kwargs, "need_tools_kwargs": True}
    if mode == "direct":
        extra["tool_selection"] = names
    return {"agent_name": AGENT_NAME, "extra_info": extra}


# ---- the verl tool -------------------------------------------------------------------------------
class _Store:
    """The live rollouts of a process, by key (a request id, or an instance id for explicit drivers)."""

    def __init__(self) -> None:
        self.items: OrderedDict[str, Rollout] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str) -> Rollout | None:
        with self.lock:
            r = self.items.get(key)
            if r is not None:
                self.items.move_to_end(key)
            return r

    def put(self, key: str, rollout: Rollout, owner: Any = None) -> None:
        """Keep `rollout`; with an `owner` (its AgentData), until the owner is garbage-collected."""
        with self.lock:
            if owner is not None:
                weakref.finalize(owner, self.discard, key, rollout)
            self.items[key] = rollout
            while len(self.items) > MAX_ROLLOUTS:
                self.items.popitem(last=False)

    def discard(self, key: str, rollout: Rollout | None = None) -> None:
        with self.lock:
            if key in self.items and (rollout is None or self.items[key] is rollout):
                del self.items[key]

    def __len__(self) -> int:
        return len(self.items)


ROLLOUTS = _Store()  # shared by every CompoWorldTool of the process: verl makes one object per tool


def _task_source(create_kwargs: Mapping[str, Any] | None, agent_data: Any) -> Any:
    if create_kwargs and create_kwargs.get("task") is not None:
        return create_kwargs["task"]
    tools_kwargs = getattr(agent_data, "tools_kwargs", None) or {}
    for entry in tools_kwargs.values():
        ck = (entry or {}).get("create_kwargs") or {}
        if ck.get("task") is not None:
            return ck["task"]
    return None


class _ToolCore:
    """What `CompoWorldTool` does, without verl's base class (imported only when the tool is used)."""

    def _setup(self, config: Mapping[str, Any] | None) -> None:
        config = dict(config or {})
        self.mode = _check_choice("mode", config.get("mode", "gateway"), MODES)
        self.reward = _check_choice("reward", config.get("reward", "score"), REWARDS)
        self._instances: dict[str, dict[str, Any]] = {}
        self._ids = count()

    async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, Any]:
        from verl.tools.schemas import ToolResponse

        if instance_id is None:
            instance_id = f"{self.name}-{next(self._ids)}"
        ck = kwargs.get("create_kwargs")
        if ck is None and "task" in kwargs:
            ck = {"task": kwargs["task"]}
        self._instances[instance_id] = {"create_kwargs": dict(ck or {}), "key": None}
        return instance_id, ToolResponse()

    def _rollout(self, instance_id: str, agent_data: Any) -> tuple[str, Rollout]:
        inst = self._instances.setdefault(instance_id, {"create_kwargs": {}, "key": None})
        request_id = getattr(agent_data, "request_id", None)
        owner = agent_data if request_id is not None else None
        # the AgentData's identity too: verl's full_determinism ids (det-N) repeat at every step
        key = f"{request_id}@{id(agent_data):x}" if owner is not None else instance_id
        inst["key"] = key
        r = ROLLOUTS.get(key)
        if r is None:
            src = _task_source(inst["create_kwargs"], agent_data)
            if src is None:
                raise ValueError(
                    f"{self.name}: no task for this rollout: put it in "
                    "extra_info.tools_kwargs.<tool>.create_kwargs.task (`compoworld export rl "
                    "--format verl` does)"
                )
            r = Rollout(load_task(src))
            ROLLOUTS.put(key, r, owner)
        return key, r

    async def execute(self, instance_id: str, parameters: Any, **kwargs: Any) -> tuple[Any, float, dict]:
        from verl.tools.schemas import ToolResponse

        agent_data = kwargs.get("agent_data")
        _, r = self._rollout(instance_id, agent_data)
        turn = getattr(agent_data, "assistant_turns", None)
        was_done = r.done
        result = r.call(self.name, parameters, turn=turn if isinstance(turn, int) and turn > 0 else None)
        step = 0.0
        if r.done and not was_done:  # this call was `finish`: report the rollout's reward
            step = reward_of(r.verdict, self.reward)
        extra = getattr(agent_data, "extra_fields", None)
        if isinstance(extra, dict):  # the log of what ran, for compute_score (in any process)
            extras = extra.get(EXTRAS)
            if not isinstance(extras, dict):
                extras = extra[EXTRAS] = {}
            extras[VERDICT] = r.record()
        return ToolResponse(text=envelope_text(result)), step, {"success": result.get("success") is True}

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """The rollout's reward: of its verdict at `finish`, or of its state now (no answer)."""
        _, r = self._rollout(instance_id, kwargs.get("agent_data"))
        return reward_of(r.result(), self.reward)

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        inst = self._instances.pop(instance_id, None)
        if inst is not None and inst["key"] == instance_id:  # keyed by the instance: its rollout ends
            ROLLOUTS.discard(instance_id)


_TOOL_CLASS: type | None = None


def _tool_class() -> type:
    global _TOOL_CLASS
    if _TOOL_CLASS is None:
        from verl.tools.base_tool import BaseTool

        class CompoWorldTool(_ToolCore, BaseTool):
            """A CompoWorld tool for verl's `ToolAgentLoop` (one object per tool of the tool config;
            `config`: `mode` direct|gateway, `reward` score|V|wildawm)."""

            def __init__(self, config: dict, tool_schema: Any) -> None:
                if tool_schema is None:
                    raise ValueError(
                        "CompoWorldTool needs its tool_schema in the tool config "
                        "(`compoworld export verl-tools` writes it)"
                    )
                super().__init__(config, tool_schema)
                self._setup(config)

        CompoWorldTool.__module__ = __name__
        _TOOL_CLASS = CompoWorldTool
    return _TOOL_CLASS


def __getattr__(name: str) -> Any:
    # verl's BaseTool imports torch and ray (seconds): the class is built when first asked for, so the
    # reward function and the config writer import without them
    if name == "CompoWorldTool":
        return _tool_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AGENT_NAME",
    "DATA_SOURCE",
    "ROLLOUTS",
    "Rollout",
    "compute_score",
    "format_tool_call",
    "load_task",
    "replay_log",
    "replay_text",
    "reward_of",
    "row_columns",
    "tool_config",
    "tool_schemas",
    "write_tool_config",
]

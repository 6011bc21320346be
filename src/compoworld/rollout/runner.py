"""The evaluation runner: k samples per task, C episodes at once under asyncio, resumable.

A run is a directory: `config.json` (what was asked), `episodes.jsonl` (one line per finished
episode, flushed and fsynced before the next is counted) and `groups.jsonl` (the group rewards of
each task once its k samples are done). Running the same command again skips finished episodes and
finishes the rest: nothing finished is lost or run twice, even after `kill -9`, because a line is
either whole on disk or ignored (a torn last line is cut off before appending).

An episode the endpoint failed (`ENDPOINT_FAILURES`: unreachable, 5xx after retries, timeouts) is
not finished: it goes to `failures.jsonl`, is reported apart, and the next run tries it again. When
`abort_after` such failures come in a row, the run stops early rather than hammer a dead server.
`server.json` records the server profile the client used and what it learned, run by run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from compoworld.agents.loop import ENDPOINT_FAILURES, Limits, run_episode, task_budget
from compoworld.agents.policies import Agent
from compoworld.rewards import (
    MAX_MALFORMED_TURNS,
    compoworld_group_rewards,
    episode_wildawm_reward,
    format_failed,
    group_advantages,
    wildawm_advantages,
)
from compoworld.tasks.model import Task
from compoworld.tasks.prompt import hint_suffix


@dataclass(frozen=True)
class RunConfig:
    tasks_file: str
    tasks_sha: str
    agent: str
    k: int
    mode: str
    max_turns: int
    max_tokens: int
    episode_timeout: float
    lam: float = 0.01
    server_profile: str = "auto"
    request_max_tokens: int | None = None  # completion cap of each request (None: no endpoint)
    compact_history: bool = False
    hints: str = "none"  # none | hint | subtasks: what of the task's plan the agent is shown


RESUME_KEYS = {
    "tasks_sha": None,
    "agent": None,
    "k": None,
    "mode": None,
    "compact_history": False,
    "hints": "none",
}


def file_sha(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


class JsonlLog:
    """Append-only JSONL that survives kill -9: whole lines or nothing."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._repair()
        self._f = path.open("ab")

    def _repair(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with self.path.open("r+b") as f:
                f.truncate(cut)

    def append(self, record: dict[str, Any]) -> None:
        self._f.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.close()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_bytes().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a torn line from a killed run
    return out


def finished(records: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    """The finished episode of each (task, sample): endpoint failures never count (runs written
    before they went to failures.jsonl kept them in episodes.jsonl)."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for e in records:
        if e.get("error_class") not in ENDPOINT_FAILURES:
            out.setdefault((e["task_id"], e["sample"]), e)
    return out


def pending_failures(run_dir: str | Path) -> list[dict[str, Any]]:
    """The latest endpoint failure of each (task, sample) that no later run has finished."""
    d = Path(run_dir)
    done = finished(read_jsonl(d / "episodes.jsonl"))
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for e in [*read_jsonl(d / "episodes.jsonl"), *read_jsonl(d / "failures.jsonl")]:
        key = (e["task_id"], e["sample"])
        if e.get("error_class") in ENDPOINT_FAILURES and key not in done:
            latest[key] = e
    return list(latest.values())


def load_run(run_dir: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """(config, finished episodes, groups) of a run directory."""
    d = Path(run_dir)
    cfg_path = d / "config.json"
    if not cfg_path.exists():
        raise FileNotFoundError(f"{d} is not a run directory (no config.json)")
    episodes = list(finished(read_jsonl(d / "episodes.jsonl")).values())
    return json.loads(cfg_path.read_text()), episodes, read_jsonl(d / "groups.jsonl")


def _group_record(task: Task, episodes: list[dict[str, Any]], lam: float) -> dict[str, Any]:
    episodes = sorted(episodes, key=lambda e: e["sample"])
    cw = compoworld_group_rewards([e["checks"] for e in episodes], lam)
    wa = [e["reward_wildawm"] for e in episodes]
    return {
        "task_id": task.id,
        "samples": [e["sample"] for e in episodes],
        "reward_compoworld": cw,
        "reward_wildawm": wa,
        "advantage_compoworld": group_advantages(cw),
        "advantage_wildawm": wildawm_advantages(wa, [not _format_ok(e) for e in episodes]),
    }


def _finished_reply(content: Any) -> bool:
    try:
        env = json.loads(content) if isinstance(content, str) else content
    except ValueError:
        return False
    return (
        isinstance(env, dict)
        and env.get("success") is True
        and (env.get("data") or {}).get("finished") is True
    )


def _format_ok(rec: dict[str, Any]) -> bool:
    """Not a format failure (`rewards.format`): `finish` ran, and no agent_format run of bad turns."""
    if "format_ok" in rec:
        return bool(rec["format_ok"])
    finish_ids = {
        tc.get("id")
        for m in rec.get("messages") or []
        if m.get("role") == "assistant"
        for tc in m.get("tool_calls") or []
        if (tc.get("function") or {}).get("name") == "finish"
    }
    finished = any(
        m.get("role") == "tool" and m.get("tool_call_id") in finish_ids and _finished_reply(m.get("content"))
        for m in rec.get("messages") or []
    )
    return not format_failed(finished, MAX_MALFORMED_TURNS if rec.get("error_class") == "agent_format" else 0)


# a run's tasks' own budgets, by task and mode: the k samples of a task share one
_BUDGETS: dict[tuple[str, str, str], tuple[int, int]] = {}


async def episode_record(task: Task, agent: Agent, sample: int, cfg: RunConfig) -> dict[str, Any]:
    """One episode as the record the run directory stores (the same locally and on a Ray actor)."""
    turns, tokens = cfg.max_turns, cfg.max_tokens
    if not turns or not tokens:  # 0: the task's own budget (`task_budget`), worked out once per task
        key = (task.id, task.initial_state_hash, cfg.mode)
        own = _BUDGETS.get(key)
        if own is None:
            if len(_BUDGETS) >= 1 << 16:
                _BUDGETS.clear()
            own = _BUDGETS[key] = task_budget(task, cfg.mode)
        turns, tokens = turns or own[0], tokens or own[1]
    limits = Limits(turns, tokens, compact_history=cfg.compact_history)
    shown = hint_suffix(task, cfg.hints)
    # the agent sees the instruction with the hint; the checks are the task's own, unchanged
    seen = task.model_copy(update={"instruction": task.instruction + shown}) if shown else task
    try:
        ep = await asyncio.wait_for(run_episode(seen, agent, sample, cfg.mode, limits), cfg.episode_timeout)
        rec = ep.record()
    except TimeoutError:
        rec = {
            "task_id": task.id,
            "sample": sample,
            "agent": agent.name,
            "mode": cfg.mode,
            "messages": [],
            "steps": [],
            "answer": None,
            "checks": [
                {
                    "id": r.id,
                    "passed": False,
                    "weight": r.weight,
                    "detail": "episode timed out",
                    "kind": r.kind,
                }
                for r in task.rubric
            ],
            "V": 0,
            "score": 0.0,
            "error_class": "timeout",
            "error": f"episode over {cfg.episode_timeout}s",
            "usage": {"prompt_tokens": 0, "completion_tokens": 0},
            "turns": 0,
            "seconds": cfg.episode_timeout,
            "malformed_calls": 0,
            "requests": [],
            "abandoned": {"attempts": 0, "prompt_tokens_est": 0},
            "compacted": 0,
        }
    rec["budget"] = {"turns": turns, "tokens": tokens}
    rec["format_ok"] = _format_ok(rec)
    rec["reward_wildawm"] = episode_wildawm_reward(rec["format_ok"], bool(rec["V"]), rec["checks"])
    rec["hints"], rec["hint_shown"] = cfg.hints, shown  # so reports compare and exports strip it
    rec["family"] = task.meta.get("family")
    rec["services"] = task.services
    rec["all_services"] = task.all_services
    rec["domains"] = task.meta.get("domains", [])
    rec["K"], rec["L"] = task.meta.get("K"), task.meta.get("L")
    return rec


async def run_eval(
    tasks: list[Task],
    agent: Agent,
    cfg: RunConfig,
    out: str | Path,
    concurrency: int = 8,
    on_progress: Callable[[int], None] | None = None,
    server: Callable[[], dict[str, Any]] | None = None,
    abort_after: int | None = None,
    execute: Callable[[Task, int], Awaitable[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Run every missing (task, sample) episode; returns counts of what was done.

    `execute` runs one episode somewhere else and returns its record (`rollout.cluster.RayExecutor`
    fans the same episodes out over Ray actors); the run directory is written here either way.

    `server` gives the client's server record (profile, learned limits) for `server.json`;
    `abort_after` endpoint failures in a row (default: max(4, concurrency)) stop the run early."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    cfg_path = d / "config.json"
    if cfg_path.exists():
        old = json.loads(cfg_path.read_text())
        for key, default in RESUME_KEYS.items():
            if old.get(key, default) != asdict(cfg)[key]:
                raise ValueError(
                    f"{d} holds a run with {key}={old.get(key, default)!r}, not {asdict(cfg)[key]!r}; "
                    "use another --out to start a new run"
                )
    else:
        cfg_path.write_text(json.dumps(asdict(cfg), indent=2))
    episodes_path, groups_path = d / "episodes.jsonl", d / "groups.jsonl"
    log, groups = JsonlLog(episodes_path), JsonlLog(groups_path)
    failures = JsonlLog(d / "failures.jsonl")
    done: dict[str, dict[int, dict[str, Any]]] = {}
    for (task_id, sample), e in finished(read_jsonl(episodes_path)).items():
        done.setdefault(task_id, {})[sample] = e
    grouped = {g["task_id"] for g in read_jsonl(groups_path)}
    by_id = {t.id: t for t in tasks}
    sem = asyncio.Semaphore(concurrency)
    counts: dict[str, Any] = {
        "skipped": sum(len(v) for v in done.values()),
        "ran": 0,
        "failed": 0,
        "failures": {},
        "not_run": 0,
        "aborted": None,
    }
    abort_after = abort_after or max(4, concurrency)
    streak = [0]

    def close_group(task: Task) -> None:
        eps = done.get(task.id, {})
        if task.id not in grouped and len(eps) >= cfg.k:
            groups.append(_group_record(task, [eps[i] for i in range(cfg.k)], cfg.lam))
            grouped.add(task.id)

    for t in tasks:  # groups finished before a kill but not yet recorded
        close_group(t)

    async def one(task: Task, sample: int) -> None:
        async with sem:
            if counts["aborted"]:
                counts["not_run"] += 1
                return
            rec = await (
                execute(task, sample) if execute is not None else episode_record(task, agent, sample, cfg)
            )
            if rec["error_class"] in ENDPOINT_FAILURES:  # not finished: the next run retries it
                failures.append(rec)
                counts["failed"] += 1
                counts["failures"][rec["error_class"]] = counts["failures"].get(rec["error_class"], 0) + 1
                streak[0] += 1
                if streak[0] >= abort_after and not counts["aborted"]:
                    counts["aborted"] = f"{streak[0]} endpoint failures in a row; last: {rec['error']}"
                if on_progress:
                    on_progress(1)
                return
            streak[0] = 0
            if task.services and "computer" in [*task.services, *task.distractors]:
                from compoworld.interfaces.computer import screenshots_beside

                rec = screenshots_beside(rec, d)  # PNGs once per content, beside episodes.jsonl
            log.append(rec)
            done.setdefault(task.id, {})[sample] = rec
            counts["ran"] += 1
            close_group(task)
            if on_progress:
                on_progress(1)

    jobs = [one(t, s) for t in tasks for s in range(cfg.k) if s not in done.get(t.id, {})]
    try:
        await asyncio.gather(*jobs)
    finally:
        log.close()
        groups.close()
        failures.close()
        if server is not None:
            path = d / "server.json"
            runs = json.loads(path.read_text()) if path.exists() else []
            path.write_text(json.dumps([*runs, server()], indent=2))
    counts["tasks"] = len(by_id)
    return counts

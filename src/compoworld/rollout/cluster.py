"""Ray, when one machine is not enough: connect once, and keep Ray an optional import.

`connect("local")` starts a private local cluster (for a laptop or a test), `connect("auto")`
joins the cluster this machine belongs to, and any other value is a cluster address
("ray://head:10001" or "head:6379"). Ray is imported only here, only when a `--ray` option is used.
"""

from __future__ import annotations

import os
from typing import Any

from compoworld.core.cluster import connect  # noqa: F401  (re-exported: rollout.cluster.connect)


# ---- rollouts on Ray ---------------------------------------------------------------------------
def build_agent(spec: dict[str, Any]) -> Any:
    """An agent from a plain spec (what crosses to an actor): oracle, noop, or an LLM endpoint."""
    from compoworld.agents.policies import LLMAgent, NoopAgent, OracleAgent

    kind = spec.get("kind")
    if kind == "oracle":
        return OracleAgent()
    if kind == "noop":
        return NoopAgent()
    if kind == "llm":
        from compoworld.llm.client import LLMClient, LLMConfig

        return LLMAgent(LLMClient(LLMConfig(**spec["config"])))
    raise ValueError(f"unknown agent kind {kind!r}: expected oracle, noop or llm")


class EpisodeWorker:
    """A Ray actor that holds environments and runs many episodes at once on its own event loop
    (Ray runs an async actor's calls concurrently, up to `max_concurrency`)."""

    def __init__(self, agent_spec: dict[str, Any], cfg: dict[str, Any], library: Any = None) -> None:
        from compoworld.core import library as libraries
        from compoworld.rollout.runner import RunConfig

        libraries.use(library)  # the driver's library (rebuilt here from its manifests)
        self.agent = build_agent(agent_spec)
        self.cfg = RunConfig(**cfg)
        self.tasks: dict[str, Any] = {}

    async def run(self, task_id: str, task_json: bytes, sample: int) -> dict[str, Any]:
        from compoworld.rollout.runner import episode_record
        from compoworld.tasks.model import Task

        task = self.tasks.get(task_id)
        if task is None:
            task = self.tasks[task_id] = Task.model_validate_json(task_json)
        return await episode_record(task, self.agent, sample, self.cfg)

    def pid(self) -> int:
        return os.getpid()


class RayExecutor:
    """Runs (task, sample) episodes on a pool of actors for the local runner, which keeps writing
    the run directory: a record is written only when it comes back, so an actor that dies loses
    nothing (its unfinished episodes are sent to a fresh actor) and duplicates nothing."""

    def __init__(
        self,
        address: str | None,
        actors: int,
        agent_spec: dict[str, Any],
        cfg: Any,
        per_actor: int = 32,
        max_restarts: int = 8,
    ) -> None:
        from dataclasses import asdict

        self.ray = connect(address)
        self._cls = self.ray.remote(max_concurrency=per_actor, num_cpus=0)(EpisodeWorker)
        from compoworld.core.library import chosen

        self._args = (agent_spec, asdict(cfg), chosen())
        self.actors = [self._cls.remote(*self._args) for _ in range(actors)]
        self._next = 0
        self._refs: dict[str, Any] = {}
        self.restarts = 0
        self.max_restarts = max_restarts

    def _task_ref(self, task: Any) -> Any:
        ref = self._refs.get(task.id)
        if ref is None:
            ref = self._refs[task.id] = self.ray.put(task.to_json())
        return ref

    async def __call__(self, task: Any, sample: int) -> dict[str, Any]:
        from ray.exceptions import RayActorError

        while True:
            actor = self.actors[self._next % len(self.actors)]
            self._next += 1
            try:
                return await actor.run.remote(task.id, self._task_ref(task), sample)
            except RayActorError:
                self._replace(actor)

    def _replace(self, dead: Any) -> None:
        if dead not in self.actors:
            return  # another episode of the same actor already replaced it
        self.restarts += 1
        if self.restarts > self.max_restarts:
            raise RuntimeError(f"{self.restarts} Ray actors died; giving up (see the Ray logs)")
        self.actors[self.actors.index(dead)] = self._cls.remote(*self._args)

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)

"""`compoworld serve stdio`: one task's environment over stdio, for an agent harness's MCP config.

On exit (the harness closes stdin) the final state and the verifier's result go to a results file
outside anything the tools can reach (the agent has no tool that reads files of the host).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
from mcp.server.stdio import stdio_server

from compoworld.serve.mcp_server import EnvSession, build_server
from compoworld.tasks.model import Task
from compoworld.verify.verifier import verify


def default_results_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "compoworld" / "results"


def serve_stdio(task: Task, mode: str, result_path: Path) -> None:
    session = EnvSession(task.environment(), mode)
    server = build_server(lambda ctx: session, session.input_schema)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        final = session.env.snapshot()
        result = verify(task, final, session.answer)
        result_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = result_path.with_name(result_path.name + ".tmp")
        tmp.write_text(
            json.dumps(
                {
                    "task_id": task.id,
                    "answer": session.answer,
                    "calls": session.calls,
                    "V": int(result.passed),
                    "score": result.score,
                    "checks": [c.model_dump() for c in result.checks],
                    "final_state_hash": session.env.state_hash(),
                    "final_state": final,
                }
            )
        )
        tmp.replace(result_path)

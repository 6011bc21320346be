"""Collect trajectories from an external agent harness into CompoWorld's run format.

For each task and each of k attempts, a session of `compoworld serve http` (started here unless
`--server` is given) is opened through the control API; the harness command is run with the
session's MCP URL and agent token (and config files written for OpenCode, Codex CLI and Claude Code);
when it exits, the calls the server saw (`GET /sessions/ID/calls`) and the verifier's result
(`POST /sessions/ID/verify`) become one episode line of `OUT/episodes.jsonl`, next to a
`config.json`. The run directory then reads like one of `compoworld eval`: `compoworld report`,
`compoworld tasks judge TASKS --runs OUT` and the difficulty gate take it as it is. A rerun skips
the (task, attempt) pairs already collected.

The harness command is a template; these fields are filled in per attempt:
  {mcp_url} {agent_token} {instruction} (shell-quoted) {instruction_file} {config_dir}
  {task_id} {sample} {base_url} {model}

    python examples/harness/collect.py --tasks runs/tasks.jsonl --k 3 --out runs/opencode \
        --base-url http://127.0.0.1:8080/v1 --model smollm2 \
        --harness 'cd {config_dir} && opencode run --model compoworld/{model} {instruction}'

Without `--harness`, the bundled `mcp_agent.py` (an MCP client driving the OpenAI-compatible model) runs.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_HARNESS = (
    # `--opt=value`: an agent token may begin with '-', which argparse would read as an option
    f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'mcp_agent.py'))} --mcp-url={{mcp_url}} "
    "--token={agent_token} --base-url={base_url} --model={model} --instruction-file={instruction_file}"
)


def _api(base: str, token: str, method: str, path: str, body: dict | None = None) -> dict[str, Any]:
    req = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read() or b"{}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(tasks: Path, mode: str, wait_s: float = 180.0) -> tuple[subprocess.Popen, str, str]:
    port, token = _free_port(), secrets.token_hex(16)
    exe = Path(sys.executable).with_name("compoworld")
    cmd = [
        str(exe) if exe.exists() else sys.executable,
        *([] if exe.exists() else ["-m", "compoworld.cli.main"]),
    ]
    proc = subprocess.Popen(
        [
            *cmd,
            "serve",
            "http",
            "--tasks",
            str(tasks),
            "--port",
            str(port),
            "--mode",
            mode,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # the token by environment, not argv: a harness with a shell could read it from `ps`
        env={**os.environ, "COMPOWORLD_CONTROL_TOKEN": token},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + wait_s  # a loaded machine can take a while to import and load the tasks
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/sessions", timeout=1)
        except urllib.error.HTTPError:
            return proc, url, token  # it answers (401 without a token): up
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"serve http exited: {proc.stderr.read().decode()[-500:]}") from None
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"serve http did not start within {wait_s:.0f} s")


def harness_configs(folder: Path, mcp_url: str, token: str, base_url: str = "", model: str = "") -> None:
    """The session as OpenCode, Codex CLI and Claude Code read an MCP server from their config, with
    the OpenAI-compatible endpoint as their model provider where one is given (OpenCode speaks chat
    completions; Codex CLI only the Responses API, which vLLM and OpenAI serve and llama.cpp does not)."""
    auth = {"Authorization": f"Bearer {token}"}
    opencode: dict[str, Any] = {
        "$schema": "https://opencode.ai/config.json",
        "mcp": {"compoworld": {"type": "remote", "url": mcp_url, "headers": auth, "enabled": True}},
    }
    if base_url and model:
        opencode["provider"] = {
            "compoworld-llm": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "OpenAI-compatible endpoint",
                "options": {"baseURL": base_url},
                "models": {model: {"name": model, "tool_call": True}},
            }
        }
        opencode["model"] = f"compoworld-llm/{model}"
    (folder / "opencode.json").write_text(json.dumps(opencode, indent=1))
    (folder / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"compoworld": {"type": "http", "url": mcp_url, "headers": auth}}})
    )
    codex = folder / ".codex"
    codex.mkdir(exist_ok=True)
    toml = (
        f'[mcp_servers.compoworld]\nurl = "{mcp_url}"\nhttp_headers = {{ Authorization = "Bearer {token}" }}\n'
        'default_tools_approval_mode = "approve"\n'  # the task's tools run without asking (not the shell)
    )
    if base_url and model:
        toml = (
            f'model = "{model}"\nmodel_provider = "compoworld"\n\n[model_providers.compoworld]\n'
            f'name = "OpenAI-compatible endpoint"\nbase_url = "{base_url}"\nwire_api = "responses"\n\n' + toml
        )
    (codex / "config.toml").write_text(toml)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", required=True, type=Path)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--k", type=int, default=3, help="attempts per task (the difficulty gate reads 3)")
    p.add_argument("--harness", default=DEFAULT_HARNESS, help="command template (see the module docstring)")
    p.add_argument(
        "--name", default=None, help="the agent's name in the run (default: the harness's program)"
    )
    p.add_argument("--base-url", default=os.environ.get("COMPOWORLD_BASE_URL", ""))
    p.add_argument("--model", default=os.environ.get("COMPOWORLD_MODEL", ""))
    p.add_argument("--server", default=None, help="a running `serve http` (default: start one)")
    p.add_argument("--control-token", default=os.environ.get("COMPOWORLD_CONTROL_TOKEN"))
    p.add_argument("--mode", default="direct", choices=["direct", "gateway"])
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per attempt")
    p.add_argument(
        "--start-timeout", type=float, default=180.0, help="seconds to wait for the started server"
    )
    p.add_argument("--limit", type=int, default=0, help="only the first N tasks")
    a = p.parse_args()

    from compoworld.rollout.runner import JsonlLog, file_sha, finished, read_jsonl
    from compoworld.tasks.model import load_tasks

    tasks = load_tasks(a.tasks)[: a.limit or None]
    name = a.name or (
        "mcp_agent" if a.harness == DEFAULT_HARNESS else shlex.split(a.harness)[0].split("/")[-1]
    )
    a.out.mkdir(parents=True, exist_ok=True)
    config = {
        "tasks_file": str(a.tasks),
        "tasks_sha": file_sha(a.tasks),
        "agent": f"harness:{name}",
        "k": a.k,
        "mode": a.mode,
        "harness": a.harness,
        "model": a.model,
        "hints": False,
        "source": "examples/harness/collect.py",
    }
    (a.out / "config.json").write_text(json.dumps(config, indent=1))
    done = finished(read_jsonl(a.out / "episodes.jsonl"))
    proc = None
    if a.server:
        url, token = a.server.rstrip("/"), a.control_token or ""
    else:
        proc, url, token = start_server(a.tasks, a.mode, a.start_timeout)
    log = JsonlLog(a.out / "episodes.jsonl")
    counts = {"episodes": 0, "V=1": 0, "timeouts": 0}
    try:
        for t in tasks:
            for sample in range(a.k):
                if (t.id, sample) in done:
                    continue
                s = _api(url, token, "POST", "/sessions", {"task_id": t.id})
                with tempfile.TemporaryDirectory(prefix="compoworld-harness-") as tmp:
                    folder = Path(tmp)
                    harness_configs(folder, s["mcp_url"], s["agent_token"], a.base_url, a.model)
                    (folder / "task.txt").write_text(t.instruction)
                    fields = {
                        "mcp_url": shlex.quote(s["mcp_url"]),
                        "agent_token": shlex.quote(s["agent_token"]),
                        "instruction": shlex.quote(t.instruction),
                        "instruction_file": shlex.quote(str(folder / "task.txt")),
                        "config_dir": shlex.quote(str(folder)),
                        "task_id": shlex.quote(t.id),
                        "sample": str(sample),
                        "base_url": shlex.quote(a.base_url),
                        "model": shlex.quote(a.model),
                    }
                    t0 = time.perf_counter()
                    error_class, error, output = "ok", None, ""
                    try:
                        r = subprocess.run(
                            a.harness.format(**fields),
                            env={k: v for k, v in os.environ.items() if k != "COMPOWORLD_CONTROL_TOKEN"},
                            shell=True,
                            cwd=folder,
                            capture_output=True,
                            text=True,
                            timeout=a.timeout,
                        )
                        output = (r.stdout + r.stderr)[-4000:]
                        if r.returncode != 0:
                            error_class, error = "agent_format", f"the harness exited with {r.returncode}"
                    except subprocess.TimeoutExpired:
                        error_class, error = "agent_limit", f"the harness ran past {a.timeout}s"
                        counts["timeouts"] += 1
                seconds = time.perf_counter() - t0
                calls = _api(url, token, "GET", f"/sessions/{s['session_id']}/calls")["calls"]
                v = _api(url, token, "POST", f"/sessions/{s['session_id']}/verify", {})
                _api(url, token, "DELETE", f"/sessions/{s['session_id']}")
                steps = [
                    {"tool": c["tool"], "arguments": c.get("arguments", {}), "envelope": c.get("result")}
                    for c in calls
                    if c["tool"] != "finish"
                ]
                log.append(
                    {
                        "task_id": t.id,
                        "sample": sample,
                        "agent": config["agent"],
                        "mode": a.mode,
                        "messages": [{"role": "user", "content": t.instruction}],
                        "steps": steps,
                        "answer": v.get("answer"),
                        "checks": v["checks"],
                        "V": v["V"],
                        "score": v["score"],
                        "error_class": error_class,
                        "error": error,
                        "usage": {"prompt_tokens": 0, "completion_tokens": 0},
                        "turns": len(steps),
                        "seconds": round(seconds, 3),
                        "malformed_calls": sum(
                            1 for c in steps if (c["envelope"] or {}).get("success") is False
                        ),
                        "requests": [],
                        "abandoned": {"attempts": 0, "prompt_tokens_est": 0},
                        "compacted": 0,
                        "harness_output": output,
                        "final_state_hash": v.get("state_hash"),
                        "services": t.services,
                        "all_services": t.all_services,
                        "domains": t.meta.get("domains", []),
                        "K": t.meta.get("K"),
                        "L": t.meta.get("L"),
                    }
                )
                counts["episodes"] += 1
                counts["V=1"] += v["V"]
    finally:
        log.close()
        if proc is not None:
            proc.terminate()
            proc.wait(10)
    print(json.dumps({"out": str(a.out), **counts}))


if __name__ == "__main__":
    main()

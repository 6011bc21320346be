"""Play a task by hand, seeing only what `compoworld eval` shows a model.

    python tools/play.py start TASKS.jsonl --id ID --session DIR [--mode direct] [--hints none]
        prints the system prompt, the user message and the tool list (what the model is sent)
    python tools/play.py tools DIR [--service S]  the tool list again (only service S's: a player
                                              whose terminal cuts long output pages it by service)
    python tools/play.py call DIR TOOL 'JSON'  runs one call and prints its envelope, as the model sees it
    python tools/play.py finish DIR 'answer'   verifies; prints PASS or FAIL and the names of failed
                                              checks; the full verdict goes to DIR/verdict.json

Nothing before `finish` prints or stores ground truth (rubric, reference, hint, traps, answer): the
session folder holds the task file's path, the task id and the calls made so far. Each call replays
the earlier ones on the task's initial state (environments are deterministic), so a session is
plain files and can be resumed from any shell.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

FINISH_NOTE = "\n\nWhen you are finished, call `finish` with your final answer (empty if none)."


def _task(session: dict[str, Any]) -> Any:
    from compoworld.tasks.model import load_tasks

    for t in load_tasks(Path(session["tasks"])):
        if t.id == session["id"]:
            return t
    raise SystemExit(f"error: no task {session['id']!r} in {session['tasks']}")


def _session(folder: Path) -> dict[str, Any]:
    f = folder / "session.json"
    if not f.is_file():
        raise SystemExit(f"error: {folder} is not a play session (start one with `play.py start`)")
    return json.loads(f.read_text())


def _calls(folder: Path) -> list[dict[str, Any]]:
    f = folder / "calls.jsonl"
    return [json.loads(x) for x in f.read_text().splitlines() if x.strip()] if f.is_file() else []


def _env(task: Any, mode: str, calls: list[dict[str, Any]]) -> tuple[Any, Any]:
    env = task.environment()
    gateway = env.gateway_for(mode) if mode != "direct" else None
    for c in calls:
        _run(env, gateway, c["tool"], c["arguments"])
    return env, gateway


def _run(env: Any, gateway: Any, name: str, args: Any) -> dict[str, Any]:
    if gateway is not None and name in gateway.specs:
        return gateway.call(name, args)
    return env.call(name, args)


def _tools(task: Any, mode: str) -> list[dict[str, Any]]:
    from compoworld.agents.loop import tool_list

    return tool_list(task.environment(), mode)


def _services(tools: list[dict[str, Any]]) -> list[str]:
    return sorted({t["function"]["name"].split("__")[0] for t in tools if "__" in t["function"]["name"]})


def _print_tools(tools: list[dict[str, Any]]) -> None:
    print(f"=== tools ({len(tools)}) ===")
    for t in tools:
        fn = t["function"]
        print(
            json.dumps(
                {
                    "name": fn["name"],
                    "description": fn.get("description", ""),
                    "parameters": fn.get("parameters", {}),
                },
                ensure_ascii=False,
            )
        )


def start(args: argparse.Namespace) -> None:
    from compoworld.tasks.prompt import hint_suffix, system_prompt, task_user

    folder = Path(args.session)
    if (folder / "session.json").exists() and not args.force:
        raise SystemExit(f"error: {folder} already holds a session (pass --force to start over)")
    folder.mkdir(parents=True, exist_ok=True)
    session = {
        "tasks": str(Path(args.tasks).resolve()),
        "id": args.id,
        "mode": args.mode,
        "hints": args.hints,
    }
    task = _task(session)
    (folder / "session.json").write_text(json.dumps(session))
    (folder / "calls.jsonl").write_text("")
    (folder / "verdict.json").unlink(missing_ok=True)
    env = task.environment()
    print("=== system ===")
    print(system_prompt(env.clock.iso(), task_user(task), args.mode))
    print("=== user ===")
    print(task.instruction + hint_suffix(task, args.hints) + FINISH_NOTE)
    listed = _tools(task, args.mode)
    _print_tools(listed)
    # last, where a terminal that cuts long output still shows it: how to page the list above
    every = _services(listed)
    print(f"=== services: {', '.join(every)} (one's tools: play.py tools DIR --service NAME) ===")


def tools(args: argparse.Namespace) -> None:
    session = _session(Path(args.session))
    listed = _tools(_task(session), session["mode"])
    if args.service:
        every = sorted(
            {t["function"]["name"].split("__")[0] for t in listed if "__" in t["function"]["name"]}
        )
        listed = [t for t in listed if t["function"]["name"].startswith(f"{args.service}__")]
        if not listed:
            raise SystemExit(
                f"error: no tools of a service {args.service!r} in this session; its services: {', '.join(every)}"
            )
    _print_tools(listed)


def call(args: argparse.Namespace) -> None:
    from compoworld.core.envelope import envelope_text, failure

    folder = Path(args.session)
    session = _session(folder)
    if (folder / "verdict.json").exists():
        raise SystemExit("error: this session is finished")
    calls = _calls(folder)
    task = _task(session)
    env, gateway = _env(task, session["mode"], calls)
    try:
        arguments = json.loads(args.arguments) if args.arguments.strip() else {}
    except json.JSONDecodeError as e:
        print(
            envelope_text(
                failure(400, "invalid_arguments", f"Arguments of {args.tool} are not valid JSON: {e}")
            )
        )
        return
    result = _run(env, gateway, args.tool, arguments)
    with (folder / "calls.jsonl").open("a") as f:
        f.write(json.dumps({"tool": args.tool, "arguments": arguments}) + "\n")
    print(envelope_text(result))


def finish(args: argparse.Namespace) -> None:
    from compoworld.verify.verifier import verify

    folder = Path(args.session)
    session = _session(folder)
    if (folder / "verdict.json").exists():
        raise SystemExit("error: this session is already finished")
    calls = _calls(folder)
    task = _task(session)
    env, _ = _env(task, session["mode"], calls)
    result = verify(task, env.snapshot(), args.answer)
    failed = [c for c in result.checks if not c.passed]
    desc = {r.id: r.description for r in task.rubric}
    verdict = {
        "task": task.id,
        "passed": result.passed,
        "score": result.score,
        "calls": len(calls),
        "answer": args.answer,
        "checks": [c.model_dump() for c in result.checks],
        "failed": [{"id": c.id, "description": desc.get(c.id, ""), "detail": c.detail} for c in failed],
    }
    (folder / "verdict.json").write_text(json.dumps(verdict, indent=2))
    print(f"{'PASS' if result.passed else 'FAIL'} ({len(calls)} calls)")
    for c in failed:
        print(f"  failed: {c.id} {desc.get(c.id, '')}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="play.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start", help="start a session: print the system prompt, the task and the tools")
    s.add_argument("tasks")
    s.add_argument("--id", required=True)
    s.add_argument("--session", required=True)
    s.add_argument("--mode", default="direct", choices=("direct", "gateway", "gateway-compat"))
    s.add_argument("--hints", default="none", choices=("none", "hint", "subtasks"))
    s.add_argument("--force", action="store_true", help="start over in a folder that holds a session")
    s.set_defaults(fn=start)
    t = sub.add_parser("tools", help="print the tool list again")
    t.add_argument("session")
    t.add_argument("--service", default="", help="only this service's tools (the part before '__')")
    t.set_defaults(fn=tools)
    c = sub.add_parser("call", help="run one tool call and print its envelope")
    c.add_argument("session")
    c.add_argument("tool")
    c.add_argument("arguments", nargs="?", default="{}")
    c.set_defaults(fn=call)
    f = sub.add_parser("finish", help="verify and print pass/fail with the failed checks")
    f.add_argument("session")
    f.add_argument("answer", nargs="?", default="")
    f.set_defaults(fn=finish)
    args = p.parse_args(argv)
    args.fn(args)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    main()

"""`compoworld eval`, `compoworld report` and `compoworld export`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from typer.core import TyperCommand

console = Console()
err = Console(stderr=True)
export_app = typer.Typer(help="Export datasets for trainers.", no_args_is_help=True)


def _fail(msg: str) -> None:
    from rich.markup import escape  # a message may hold brackets ('.[]', [ray]): print them as they are

    err.print(f"[red]error:[/red] {escape(msg)}", soft_wrap=True)
    raise typer.Exit(2)


def _write(out: Path, write: Any) -> Any:
    """Run `write()`, turning a path that cannot be written into one line naming it."""
    try:
        return write()
    except OSError as e:
        _fail(f"cannot write {out}: {e.strerror or e}")


class EvalCommand(TyperCommand):
    """`eval`, whose `--hints` stands alone (the hint) or takes a mode (`--hints subtasks`): an
    option with an optional value, which Typer's parser has no way to declare."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        out: list[str] = []
        for i, a in enumerate(args):
            out.append(a)
            if a == "--hints" and (i + 1 == len(args) or args[i + 1].startswith("-")):
                out.append("hint")
        return super().parse_args(ctx, out)


def eval_command(
    tasks: Annotated[Path, typer.Option(help="JSONL task file.")],
    out: Annotated[Path, typer.Option(help="Run directory (runs/NAME); an existing run is resumed.")],
    agent: Annotated[
        str | None, typer.Option(help="Built-in agent: oracle or noop (no endpoint needed).")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Model name at the endpoint (or COMPOWORLD_MODEL).")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible base URL (or COMPOWORLD_BASE_URL).")
    ] = None,
    api_key: Annotated[str | None, typer.Option(help="API key (or COMPOWORLD_API_KEY).")] = None,
    k: Annotated[int, typer.Option(help="Samples per task.")] = 1,
    concurrency: Annotated[int, typer.Option(help="Episodes at once.")] = 8,
    mode: Annotated[
        str,
        typer.Option(
            help="direct (namespaced tools), gateway (4 meta-tools) or gateway-compat (the published "
            "convention: call_tool(tool_name), bare tool names)."
        ),
    ] = "direct",
    max_turns: Annotated[
        int,
        typer.Option(
            help="Turn limit per episode; 0: the task's own (twice its reference's calls, at least 40)."
        ),
    ] = 0,
    max_tokens: Annotated[
        int,
        typer.Option(
            help="Token budget per episode (prompts and completions); 0: the task's own (three times what its "
            "reference spends one call a turn, at least 200,000)."
        ),
    ] = 0,
    max_completion_tokens: Annotated[
        int, typer.Option(help="Completion cap of each request (always sent as max_tokens).")
    ] = 4096,
    timeout: Annotated[float, typer.Option(help="Seconds per request to the endpoint.")] = 120.0,
    episode_timeout: Annotated[float, typer.Option(help="Seconds per episode, all turns included.")] = 1800.0,
    server_profile: Annotated[
        str,
        typer.Option(help="auto (detect from /models), generic, openai, vllm, sglang, llamacpp or ollama."),
    ] = "auto",
    context_window: Annotated[
        int | None, typer.Option(help="The model's context in tokens (default: from /models or learned).")
    ] = None,
    compact_history: Annotated[
        bool,
        typer.Option(
            "--compact-history/--no-compact-history",
            help="Replace old tool results by one summary line per call (recorded in the run).",
        ),
    ] = False,
    hints: Annotated[
        str,
        typer.Option(
            "--hints",
            help="Show the agent the task's hint (--hints), or its hint and subtasks (--hints subtasks); "
            "recorded in the run. Default none.",
        ),
    ] = "none",
    limit: Annotated[int | None, typer.Option(help="Only the first N tasks.")] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS",
            help="Fan episodes out over Ray actors: --ray auto joins this machine's cluster, --ray HOST:PORT "
            "another, --ray local starts one (the run directory is the same; needs compoworld\\[ray]).",
        ),
    ] = None,
    actors: Annotated[
        int, typer.Option(help="Ray actors (with --ray); each runs many episodes at once.")
    ] = 2,
) -> None:
    """Run k samples per task with C concurrent episodes; resumable; records rewards for every episode.

    Episodes the endpoint failed are not counted as finished: they are reported apart, the command
    exits with status 1, and running it again retries them."""
    from compoworld.agents.loop import tool_tokens
    from compoworld.agents.policies import LLMAgent, NoopAgent, OracleAgent
    from compoworld.core.environment import MODES
    from compoworld.llm.client import LLMClient, LLMConfig
    from compoworld.llm.profiles import PROFILE_NAMES
    from compoworld.rollout.runner import RunConfig, file_sha, run_eval
    from compoworld.tasks.model import load_tasks

    if mode not in MODES:
        _fail(f"--mode must be one of {', '.join(MODES)}")
    if server_profile not in PROFILE_NAMES:
        _fail(f"--server-profile must be one of {', '.join(PROFILE_NAMES)}")
    if max_completion_tokens < 1:
        _fail("--max-completion-tokens must be at least 1")
    if max_turns < 0 or max_tokens < 0:
        _fail("--max-turns and --max-tokens must be 0 (the task's own budget) or more")
    from compoworld.tasks.prompt import HINT_MODES

    if hints not in HINT_MODES:
        _fail(f"--hints must be one of {', '.join(HINT_MODES)} (or bare --hints for the hint)")
    if k < 1 or concurrency < 1 or actors < 1:
        _fail("--k, --concurrency and --actors must be at least 1")
    try:
        task_list = load_tasks(tasks)
    except (OSError, ValueError) as e:
        _fail(str(e))
    if limit is not None:
        task_list = task_list[:limit]
    client = None
    if agent is not None:
        if agent not in ("oracle", "noop"):
            _fail("--agent must be oracle or noop (or give --model and --base-url)")
        policy = OracleAgent() if agent == "oracle" else NoopAgent()
    else:
        try:
            config = LLMConfig.from_env(
                base_url,
                model,
                api_key,
                timeout=timeout,
                max_tokens=max_completion_tokens,
                profile=server_profile,
                context_window=context_window,
            )
        except ValueError as e:
            _fail(f"{e}; or pass --agent oracle|noop")
        client = LLMClient(config)
        policy = LLMAgent(client)
    cfg = RunConfig(
        tasks_file=str(tasks),
        tasks_sha=file_sha(tasks),
        agent=policy.name,
        k=k,
        mode=mode,
        max_turns=max_turns,
        max_tokens=max_tokens,
        episode_timeout=episode_timeout,
        server_profile=server_profile if client is not None else "none",
        request_max_tokens=max_completion_tokens if client is not None else None,
        compact_history=compact_history,
        hints=hints,
    )

    async def preflight() -> None:
        """A dead endpoint fails here in one line; a tool list that cannot fit is warned about."""
        assert client is not None
        why = await client.probe()
        if why is not None:
            await client.close()
            err.print(
                f"[red]error:[/red] {why}; nothing was run (check --base-url, or start the server)",
                soft_wrap=True,
            )
            raise typer.Exit(1)
        info = client.info()
        err.print(
            f"server profile {info['profile']} ({info['chosen']}), context window "
            f"{info['context_window'] or 'unknown'}, max_tokens {info['max_tokens']} per request",
            soft_wrap=True,
        )
        window = client.context_window
        sizes = {tuple(t.all_services): 0 for t in task_list}
        worst = max(((tool_tokens(list(s), mode), s) for s in sizes), default=(0, ()))
        if not window and worst[0] > 4096:
            # /models did not say: ask with the largest tool list before any episode (an overflow
            # answers at once, and its 400 gives the window)
            from compoworld.agents.loop import tool_list
            from compoworld.core.environment import Environment

            if await client.tools_fit(tool_list(Environment(list(worst[1]), seed=0), mode)) is False:
                window = client.context_window or worst[0]
        if window and worst[0] + max_completion_tokens > window:
            n = sum(
                1 for t in task_list if tool_tokens(t.all_services, mode) + max_completion_tokens > window
            )
            err.print(
                f"[yellow]warning:[/yellow] in {mode} mode the tool list alone needs about {worst[0]} tokens "
                f"(+{max_completion_tokens} for the reply) for {n} task(s), over the model's context "
                f"window of {window}: they will end as context_overflow; use --mode gateway or a "
                "model with a longer context",
                soft_wrap=True,
            )

    executor = None
    if ray is not None:
        from dataclasses import asdict

        from compoworld.rollout.cluster import RayExecutor

        spec = {"kind": agent} if agent is not None else {"kind": "llm", "config": asdict(client.config)}
        try:
            executor = RayExecutor(ray, actors, spec, cfg, per_actor=max(1, concurrency // actors))
        except RuntimeError as e:
            _fail(str(e))

    async def main() -> dict:
        if client is not None:
            await preflight()
        with Progress(
            TextColumn("[bold]episodes"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            disable=not err.is_terminal,
        ) as bar:
            job = bar.add_task("eval", total=len(task_list) * k)
            try:
                return await run_eval(
                    task_list,
                    policy,
                    cfg,
                    out,
                    concurrency,
                    on_progress=lambda d: bar.advance(job, d),
                    server=client.info if client is not None else None,
                    execute=executor,
                )
            finally:
                if client is not None:
                    await client.close()
                if executor is not None:
                    executor.close()

    try:
        counts = asyncio.run(main())
    except ValueError as e:
        _fail(str(e))
    console.print(f"ran {counts['ran']} episode(s), {counts['skipped']} already done -> {out}")
    _print_summary(out)
    if counts["failed"] or counts["not_run"]:
        classes = ", ".join(f"{c} {n}" for c, n in sorted(counts["failures"].items()))
        msg = f"{counts['failed']} episode(s) failed at the endpoint ({classes})"
        if counts["aborted"]:
            msg += f"; stopped early after {counts['aborted']}, {counts['not_run']} not started"
        err.print(
            f"[red]error:[/red] {msg}. They are not counted as finished (see {out}/failures.jsonl); "
            "run the same command again to retry them",
            soft_wrap=True,
        )
        raise typer.Exit(1)


def _print_summary(run_dir: Path) -> dict:
    from compoworld.rollout.metrics import summarize
    from compoworld.rollout.runner import load_run, pending_failures

    cfg, episodes, _ = load_run(run_dir)
    s = summarize(episodes, cfg["k"])
    pending = pending_failures(run_dir)
    if pending:  # apart from the metrics, which count finished episodes only
        by: dict[str, int] = {}
        for e in pending:
            by[e["error_class"]] = by.get(e["error_class"], 0) + 1
        s["endpoint_failures (not finished)"] = dict(sorted(by.items()))
    table = Table(title=f"{run_dir}: {cfg['agent']} ({cfg['mode']}), k={cfg['k']}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, val in s.items():
        table.add_row(key, json.dumps(val) if isinstance(val, dict) else str(val))
    console.print(table)
    return s


def report_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics as JSON.")] = False,
    against: Annotated[
        list[Path] | None,
        typer.Option(
            help="Other runs of the same tasks (say, with --hints): pass rates per family beside this one's."
        ),
    ] = None,
) -> None:
    """Print pass@k, pass^k, mean score and error classes, broken down by domain, service, K and L; write report.md with plots."""
    from compoworld.rollout.report import write_report
    from compoworld.rollout.runner import load_run

    try:
        cfg, episodes, _ = load_run(run_dir)
        others = [load_run(a)[:2] for a in against or []]
    except FileNotFoundError as e:
        _fail(str(e))
    if not episodes:
        _fail(f"{run_dir} has no finished episodes yet")
    summary, path = write_report(run_dir, cfg, episodes, others)
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return
    _print_summary(run_dir)
    for key in ("domains", "K", "L"):
        t = Table(title=f"by {key}")
        for col in (key, "episodes", "pass rate", "mean score"):
            t.add_column(col)
        for v, s in summary["by"][key].items():
            t.add_row(v, str(s["episodes"]), str(s["pass_rate"]), str(s["mean_score"]))
        console.print(t)
    modes = sorted({m for row in summary["hints"].values() for m in row if m != "delta"})
    t = Table(title="hinted and unhinted, by family")
    for col in ("family", *(f"{m}: pass rate (episodes)" for m in modes), "hinted - unhinted"):
        t.add_column(col)
    for fam, row in summary["hints"].items():
        cells = [f"{row[m]['pass_rate']} ({row[m]['episodes']})" if m in row else "-" for m in modes]
        t.add_row(fam, *cells, str(row.get("delta", "-")))
    console.print(t)
    console.print(f"report: {path}")


def _tokenizer(path: Path | None) -> Any:
    """A tokenizer folder for exact token counts, or None; bad input is one line."""
    if path is None:
        return None
    if not path.is_dir():
        _fail(f"--tokenizer {path}: no such folder (a tokenizer saved with save_pretrained)")
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(str(path))
    except ImportError:
        _fail("--tokenizer needs transformers: pip install 'compoworld[train]'")
    except (OSError, ValueError) as e:
        _fail(f"--tokenizer {path}: {str(e).splitlines()[0]}")


@export_app.command("sft")
def export_sft_command(
    runs: Annotated[Path, typer.Option(help="Run directory.")],
    out: Annotated[Path | None, typer.Option(help="Output JSONL (default: runs/sft/<format>.jsonl).")] = None,
    format: Annotated[str, typer.Option(help="openai or trl.")] = "openai",
    min_score: Annotated[float, typer.Option(help="Keep episodes scoring at least this.")] = 1.0,
    tools: Annotated[
        str,
        typer.Option(
            help="gateway (direct episodes rewritten exactly through the 4 meta-tools: 5 tools a row), auto "
            "(the episode's own tools when at most 128, else its gateway form), offered (exactly the "
            "episode's tools; refuses OpenAI rows over 128) or task (a direct episode as it ran, with the "
            "tools of the task's own services only, not the distractors')."
        ),
    ] = "gateway",
    tokenizer: Annotated[
        Path | None,
        typer.Option(help="A tokenizer folder (from_pretrained) to count the rows' tokens exactly."),
    ] = None,
    keep_hint: Annotated[
        bool,
        typer.Option(
            help="Keep the hint of hinted runs (eval --hints) in the prompt; by default it is dropped."
        ),
    ] = False,
) -> None:
    """Conversations of good episodes, one a line: messages plus the tools the episode was offered.

    The summary gives the rows' token lengths (whole row, and before the first assistant token):
    SFTConfig(max_length=...) must cover them, or truncation drops the assistant turns."""
    from compoworld.export.sft import TOOL_CHOICES, TooManyTools, length_summary, sft_rows, write_rows
    from compoworld.rollout.runner import load_run

    if format not in ("openai", "trl"):
        _fail("--format must be openai or trl")
    if tools not in TOOL_CHOICES:
        _fail(f"--tools must be one of {', '.join(TOOL_CHOICES)}")
    out = out or Path("runs") / "sft" / f"{format}.jsonl"
    try:
        _, episodes, _ = load_run(runs)
    except FileNotFoundError as e:
        _fail(str(e))
    tok = _tokenizer(tokenizer)
    try:
        rows = sft_rows(episodes, format, min_score, tools, keep_hint)
    except (TooManyTools, ValueError) as e:
        _fail(str(e))
    n = _write(out, lambda: write_rows(rows, out))
    console.print(f"wrote {n} conversation(s) ({format}, tools {tools}) -> {out}")
    if n:
        s = length_summary(rows, tok)
        console.print(
            f"tools per row: at most {s['tools_max']}; tokens per row ({s['counted']}): min {s['tokens_min']}, "
            f"median {s['tokens_median']}, max {s['tokens_max']}; before the first assistant token: median "
            f"{s['first_assistant_median']}, max {s['first_assistant_max']}. SFTConfig(max_length >= "
            f"{s['tokens_max']}) keeps every assistant token.",
            soft_wrap=True,
        )
        if s["over_trl_default"]:
            err.print(
                f"[yellow]warning:[/yellow] {s['over_trl_default']} of {n} row(s) are longer than SFTConfig's "
                f"default max_length (1024) and would lose their assistant tokens: set max_length >= "
                f"{s['tokens_max']}"
                + ("" if tools in ("gateway", "task") else ", or export with --tools task or gateway"),
                soft_wrap=True,
            )


@export_app.command("rl")
def export_rl_command(
    tasks: Annotated[Path, typer.Option(help="JSONL task file.")],
    out: Annotated[
        Path | None, typer.Option(help="Output Parquet file (default: runs/rl/<format>_<mode>.parquet).")
    ] = None,
    format: Annotated[str, typer.Option(help="verl or trl.")] = "verl",
    mode: Annotated[
        str, typer.Option(help="gateway (5 tools: a prompt that fits; the default) or direct tools.")
    ] = "gateway",
    tokenizer: Annotated[
        Path | None,
        typer.Option(help="A tokenizer folder (from_pretrained) to count the rollouts' tokens exactly."),
    ] = None,
) -> None:
    """Prompts plus everything the reward needs, as verl or TRL read their datasets.

    Prints what the longest reference rollout of the tasks needs and the trainer's settings under
    which it runs whole (completion / response length, tool-response length, parallel calls, turns)."""
    from compoworld.export.limits import rollout_needs, summary
    from compoworld.export.rl import export_rl
    from compoworld.tasks.model import load_tasks

    if format not in ("verl", "trl"):
        _fail("--format must be verl or trl")
    if mode not in ("direct", "gateway"):
        _fail("--mode must be direct or gateway")
    out = out or Path("runs") / "rl" / f"{format}_{mode}.parquet"
    tok = _tokenizer(tokenizer)
    try:
        task_list = load_tasks(tasks)
    except (OSError, ValueError) as e:
        _fail(str(e))
    if not task_list:
        _fail(f"{tasks} holds no tasks")
    n = _write(out, lambda: export_rl(task_list, out, format, mode))
    console.print(f"wrote {n} prompt(s) ({format}, {mode}) -> {out}")
    for line in summary(rollout_needs(task_list, mode, tok), format):
        console.print(line, soft_wrap=True, markup=False, highlight=False)
    if format == "verl":
        console.print(
            f"tool config: compoworld export verl-tools --mode {mode}"
            + (f" --tasks {tasks}" if mode == "direct" else "")
            + f" --out {out.parent / f'tool_config_{mode}.yaml'}",
            soft_wrap=True,
        )


@export_app.command("verl-tools")
def export_verl_tools_command(
    out: Annotated[
        Path | None,
        typer.Option(
            help="Output YAML (verl's multi_turn.tool_config_path; default: runs/verl/tool_config_<mode>.yaml)."
        ),
    ] = None,
    mode: Annotated[str, typer.Option(help="gateway or direct, as the rows were exported.")] = "gateway",
    tasks: Annotated[
        Path | None, typer.Option(help="JSONL task file (direct mode: its services name the tools).")
    ] = None,
    reward: Annotated[
        str, typer.Option(help="The reward `finish` reports as its tool reward: score, V or wildawm.")
    ] = "score",
) -> None:
    """verl's tool config: one CompoWorldTool per tool the RL rows can be offered."""
    from compoworld.integrations.verl import REWARDS, tool_config, write_tool_config
    from compoworld.tasks.model import load_tasks

    if mode not in ("direct", "gateway"):
        _fail("--mode must be direct or gateway")
    if reward not in REWARDS:
        _fail(f"--reward must be one of {', '.join(REWARDS)}")
    if mode == "direct" and tasks is None:
        _fail("--mode direct needs --tasks: the tools are those of the tasks' services")
    out = out or Path("runs") / "verl" / f"tool_config_{mode}.yaml"
    task_list = []
    if tasks is not None:
        try:
            task_list = load_tasks(tasks)
        except (OSError, ValueError) as e:
            _fail(str(e))
    cfg = tool_config(mode, task_list, reward)
    _write(out, lambda: write_tool_config(out, cfg))
    console.print(f"wrote {len(cfg['tools'])} tool(s) ({mode}) -> {out}")


def replay_compat_command(
    file: Annotated[Path, typer.Argument(help="Trajectories in the published convention (JSONL).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the totals as JSON.")] = False,
    seed: Annotated[int, typer.Option(help="Seed of the mounted services' data.")] = 0,
) -> None:
    """Replay the calls of published CompoWorld trajectories (call_tool {tool_name}, bare names)
    through gateway-compat mode, on every server our library has; print the share accepted."""
    from compoworld.rollout.replay import replay_file

    if not file.is_file():
        _fail(f"no file at {file}")
    try:
        s = replay_file(file, seed)
    except (ValueError, KeyError) as e:
        _fail(f"{file}: not trajectories in the published format ({e})")
    if as_json:
        sys.stdout.write(json.dumps(s, indent=2) + "\n")
        return
    share = "n/a" if s["accepted_share"] is None else f"{100 * s['accepted_share']:.1f}%"
    console.print(
        f"{s['trajectories']} trajectories, {s.get('calls', 0)} calls, {s.get('in_library', 0)} on servers our "
        f"library has ({', '.join(s['servers_in_library']) or 'none'}): {s.get('accepted', 0)} accepted ({share}), "
        f"{s.get('succeeded', 0)} succeeded on our data"
    )
    for r in s["rejected"][:10]:
        console.print(f"  rejected {r['tool']} {json.dumps(r['arguments'])[:80]}: {r['error']}")

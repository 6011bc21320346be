"""The service-writing agent: a model writes a service from a spec, in a sandbox; tests decide.

`implement(spec, client, out)`:
1. compiles the spec as usual (`compile_spec`): the tool names, schemas, the state layout (tables and
   fields) and the compiler's reading of each tool, which the tests are derived from;
2. asks the model for one Python module: a `Service` subclass whose `@tool` methods carry the
   spec's tool names and parameters and keep records in the compiled layout;
3. checks the module statically (AST): imports only from `ALLOWED_IMPORTS`, no dunder names or
   attributes, no `eval` / `exec` / `open` / `getattr` / `__import__` and the like;
4. runs it only in a sandbox: a child process (`python -I`) with resource limits (address space,
   CPU seconds, file size, no new processes), an empty environment and a folder of its own; before
   the module runs, the child pre-imports what is allowed and installs an audit hook
   (`sys.addaudithook`) that ends the process on any file opened (it needs none once loaded),
   any socket, subprocess, thread or `os.*` call, or an import not allowed. The parent talks
   to it over a private pipe (one JSON line per request, capped) and kills its process group past
   a wall-clock limit per request;
5. serves the module's tools from the engine's state (`implemented_service`): a call sends the
   service's tables to the sandbox and takes them back only if it wrote, re-validated against the
   service's typed model, so kept and compiled tools share one state;
6. runs the spec-derived tests on that service for every tool (missing or mistyped arguments
   answer 400 and change nothing; an unknown id answers 404; a valid call succeeds; create, update
   and delete then get show the effect; the declared schema is the spec's; and, for what the
   compiler compiled, its own adversarial suite).

A tool that passes every test is kept (`implementation: "sandbox"` in the manifest, `implemented`
lists them); the others keep what the compiler gave them (compiled, or simulated by the world
model). `load_manifest` serves such a manifest with its kept tools in a sandbox. Nothing the model
writes is imported or run by the engine's own process.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ALLOWED_IMPORTS = frozenset(
    {
        "__future__",
        "typing",
        "datetime",
        "re",
        "math",
        "json",
        "dataclasses",
        "collections",
        "itertools",
        "functools",
        "decimal",
        "enum",
        "string",
        "copy",
        "pydantic",
        "compoworld.core.service",
        "compoworld.core.tool",
        "compoworld.core.envelope",
        "compoworld.core.resource",
    }
)
FORBIDDEN_NAMES = frozenset(
    {
        "eval",
        "exec",
        "compile",
        "open",
        "__import__",
        "globals",
        "locals",
        "vars",
        "getattr",
        "setattr",
        "delattr",
        "breakpoint",
        "input",
        "memoryview",
        "help",
        "exit",
        "quit",
    }
)
# audit events that end the sandbox (prefixes); `open` and `import` are judged by their arguments
_DENY = (
    "_thread.",
    "os.",
    "subprocess.",
    "socket.",
    "shutil.",
    "ctypes.",
    "sys.settrace",
    "sys.setprofile",
    "sys._current_frames",
    "sys.setrecursionlimit",
    "marshal.",
    "pickle.",
    "urllib.",
    "http.",
    "ftplib.",
    "smtplib.",
    "webbrowser.",
    "glob.",
    "fcntl.",
    "mmap.",
    "pty.",
    "resource.",
    "signal.",
    "syslog.",
    "tempfile.",
    "code.__new__",
    "function.__code__",
    "gc.get_referrers",
    "gc.get_objects",
    "cpython.run_",
)
_NETWORK = {
    "socket",
    "ssl",
    "http",
    "urllib",
    "urllib3",
    "requests",
    "httpx",
    "aiohttp",
    "ftplib",
    "smtplib",
    "asyncio",
}
_PROCESS = {"subprocess", "multiprocessing", "pty", "signal", "threading", "concurrent"}
BOOT_SECONDS = 120.0  # the engine's own imports in the child, on a loaded 2-core machine
MAX_REPLY = 8 << 20  # bytes of one reply line: a module cannot flood the parent's memory
CAUSES = (
    "forbidden_import",
    "forbidden_name",
    "forbidden_attribute",
    "syntax",
    "network",
    "file_access",
    "process",
    "forbidden_call",
    "timeout",
    "memory",
    "crash",
    "no_service",
)


@dataclass(frozen=True)
class Limits:
    seconds: float = 5.0  # wall clock per request to the sandbox
    cpu_seconds: int = 20  # CPU of the whole sandbox process
    memory_mb: int = 768  # address space
    file_mb: int = 1  # largest file it may write


class Violation(Exception):
    def __init__(self, cause: str, detail: str) -> None:
        super().__init__(f"{cause}: {detail}")
        self.cause, self.detail = cause, detail


# ---- static checks ---------------------------------------------------------------------------
def static_check(code: str) -> None:
    """Raise Violation for what the module may not do, before it ever runs."""
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise Violation("syntax", f"line {e.lineno}: {e.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ["." * node.level + (node.module or "")]
            )
            for mod in mods:
                if mod not in ALLOWED_IMPORTS:
                    root = mod.lstrip(".").split(".")[0]
                    cause = (
                        "network"
                        if root in _NETWORK
                        else "process"
                        if root in _PROCESS
                        else "forbidden_import"
                    )
                    raise Violation(cause, f"line {node.lineno}: import {mod}")
        elif isinstance(node, ast.Name) and (
            node.id in FORBIDDEN_NAMES or (node.id.startswith("__") and node.id != "__name__")
        ):
            raise Violation("forbidden_name", f"line {node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr != "__init__":
            raise Violation("forbidden_attribute", f"line {node.lineno}: .{node.attr}")


# ---- the sandbox -------------------------------------------------------------------------------
_CHILD = "from compoworld.compiler.implement import _child; _child()"


class Sandbox:
    """The model's module in a child process; requests and replies are JSON lines."""

    def __init__(self, code: str, limits: Limits = Limits(), seed: int = 0, static: bool = True) -> None:
        if static:
            static_check(code)
        self.limits = limits
        self.dir = tempfile.mkdtemp(prefix="compoworld-sandbox-")
        Path(self.dir, "service.py").write_text(code, encoding="utf-8")
        self.isolated = bool(_netns())  # the kernel's own "no network" beside the audit hook
        self.proc = subprocess.Popen(
            [*_netns(), sys.executable, "-I", "-c", _CHILD, self.dir, str(seed), json.dumps(limits.__dict__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self.dir,
            env={"PATH": "/nonexistent", "HOME": self.dir, "LANG": "C.UTF-8"},
            start_new_session=True,  # its own process group: killed as a whole
        )
        self.violation: Violation | None = None
        # a sandbox nobody closes (a served service at exit) is still killed and its folder removed
        self._finalizer = weakref.finalize(self, _cleanup, self.proc, self.dir)
        # the engine's own start (imports, the hook) has its own allowance; the module's load,
        # seeding and every request after it have `limits.seconds` each
        self.request(None, BOOT_SECONDS)
        self.ready = self.request({"op": "ready"})

    def request(self, msg: dict[str, Any] | None, seconds: float | None = None) -> dict[str, Any]:
        """One reply (to `msg`, or the next line when None); a child that breaks a rule, crashes or
        overruns is a Violation (and is dead)."""
        if self.violation is not None:
            raise self.violation
        import selectors

        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            if msg is not None:
                self.proc.stdin.write((json.dumps(msg) + "\n").encode())
                self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the child is gone: its last words (or its exit) say why
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        line = b""
        if sel.select(seconds or self.limits.seconds):
            line = self.proc.stdout.readline(MAX_REPLY + 1)
            if len(line) > MAX_REPLY:
                self.close()
                self.violation = Violation("memory", f"a reply of over {MAX_REPLY >> 20} MB")
                raise self.violation
        sel.close()
        if not line:
            self._fail(timed_out=self.proc.poll() is None)
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            self.close()
            self.violation = Violation("crash", "the sandbox answered something that is not JSON")
            raise self.violation from None
        if "violation" in reply:
            self.close()
            self.violation = Violation(reply["violation"], reply.get("detail", ""))
            raise self.violation
        return reply

    def _fail(self, timed_out: bool) -> None:
        self.close()
        code = self.proc.returncode
        if timed_out:
            v = Violation("timeout", f"no answer within {self.limits.seconds}s (killed)")
        elif code in (-9, -24, 128 + 24) or code == -getattr(__import__("signal"), "SIGXCPU", 24):
            v = Violation("timeout", f"CPU limit of {self.limits.cpu_seconds}s reached")
        else:
            v = Violation("crash", f"the sandbox exited with status {code}")
        self.violation = v
        raise v

    def run(
        self, state: dict[str, Any], tool: str, args: Any
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """One call of the module's tool on `state` (clock and tables): the envelope, and the
        tables after it when it wrote."""
        reply = self.request({"op": "run", "state": state, "tool": tool, "args": args})
        if "envelope" not in reply:
            self.close()
            self.violation = Violation("crash", str(reply.get("error", "no envelope"))[:300])
            raise self.violation
        env, tables = reply["envelope"], reply.get("tables")
        err = env.get("error") or {}
        if err.get("code") == 500 and "MemoryError" in str(err.get("message")):
            self.close()
            self.violation = Violation(
                "memory", f"{tool} ran out of memory (limit {self.limits.memory_mb} MB)"
            )
            raise self.violation
        return env, tables

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@functools.lru_cache(maxsize=1)
def _netns() -> tuple[str, ...]:
    """A prefix that starts the sandbox in a network namespace of its own (no interface but a down
    loopback), where `unshare` can make one: as root, or in a user namespace. Empty elsewhere: the
    audit hook still refuses every socket."""
    import shutil

    exe = shutil.which("unshare")
    if exe is None:
        return ()
    for prefix in ((exe, "--net"), (exe, "--user", "--map-root-user", "--net")):
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0:
                return prefix
        except (OSError, subprocess.SubprocessError):
            continue
    return ()


def _cleanup(proc: subprocess.Popen, folder: str) -> None:
    import shutil

    if proc.poll() is None:
        try:
            os.killpg(proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            proc.kill()
    proc.wait()
    for f in (proc.stdin, proc.stdout):
        if f:
            with contextlib.suppress(OSError):
                f.close()
    shutil.rmtree(folder, ignore_errors=True)


def _make_hook(fd: int, loaded: list[bool]) -> tuple[Any, Any]:  # pragma: no cover (in the sandbox)
    """The audit hook and the way it ends the process. The module can rebind any module attribute
    or builtin (`os._exit`, `json.dumps`, `builtins.isinstance`, this module's `_DENY`), so every
    name the hook uses is bound here, in its closure, before the module runs; it resolves no path
    (a patched `posixpath` could lie) and allows no open at all."""
    _exit, _write, _str, _int, _len, _repr = os._exit, os.write, str, int, len, repr
    allowed = frozenset(ALLOWED_IMPORTS)
    roots = frozenset(m.split(".")[0] for m in ALLOWED_IMPORTS) - {"compoworld"}
    deny = tuple(_DENY)
    process = ("subprocess.", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork")
    frames = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_code", "f_back", "f_locals"})

    def die(cause: str, detail: str) -> None:
        try:
            text = "".join(ch if ch >= " " else " " for ch in _str(detail)[:300])
            text = text.replace("\\", "\\\\").replace('"', '\\"')
            _write(
                fd, ('{"violation": "' + cause + '", "detail": "' + text + '"}\n').encode("utf-8", "replace")
            )
        finally:
            _exit(3)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode = (args + (None, None))[:2]
            die("file_access", "open(" + _repr(path) + ", " + _repr(mode) + ")")
        elif event == "import":
            name = _str(args[0])
            if name not in allowed and name.split(".")[0] not in roots:
                die("forbidden_import", "import " + name)
        elif event.startswith("socket."):
            die("network", event)
        elif event.startswith(process):
            die("process", event)
        elif event.startswith(deny):
            die("forbidden_call", event)
        elif loaded[0] and (
            event == "sys._getframe" or (event == "object.__getattr__" and args[1:2] and args[1] in frames)
        ):
            die("forbidden_call", event + " " + _repr(args[1:2]))  # frames reach the sandbox's own locals

    return hook, die


def _child() -> None:  # pragma: no cover (runs in the sandbox process)
    """The sandbox side: import what is allowed, install the audit hook, load the module, serve."""
    import importlib
    import resource

    folder, seed = os.path.realpath(sys.argv[1]), int(sys.argv[2])
    lim = json.loads(sys.argv[3])
    mem = int(lim["memory_mb"]) << 20
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CPU, (int(lim["cpu_seconds"]), int(lim["cpu_seconds"])))
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(lim["file_mb"]) << 20, int(lim["file_mb"]) << 20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(ValueError, OSError):  # no new processes (root is exempt: the hook is not)
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    # the replies go out on a private copy of stdout; what the module prints goes nowhere, so it
    # cannot forge a reply line
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (lives as long as the process)
    loaded = [False]

    def say(obj: dict[str, Any]) -> None:
        out.write(json.dumps(obj, default=str) + "\n")
        out.flush()

    for m in ALLOWED_IMPORTS:
        if m != "__future__":
            importlib.import_module(m)
    from compoworld.core.environment import Environment
    from compoworld.core.service import Service

    Environment(["kv"], seed=0, size="small").state_hash()  # lazy imports and data files, before the hook
    source = Path(folder, "service.py").read_text(encoding="utf-8")
    code = compile(source, "service.py", "exec")
    hook, die = _make_hook(out.fileno(), loaded)
    sys.addaudithook(hook)
    say({"booted": True})  # from here on, the parent's per-request limit runs
    import builtins

    safe = {k: getattr(builtins, k) for k in dir(builtins) if k not in FORBIDDEN_NAMES or k == "__import__"}
    real_import = builtins.__import__

    allowed = frozenset(ALLOWED_IMPORTS)

    def guarded(
        name: str, globals_: Any = None, locals_: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if level or name not in allowed:
            die("forbidden_import", f"import {name}")
        return real_import(name, globals_, locals_, fromlist, level)

    safe["__import__"] = guarded
    ns: dict[str, Any] = {"__builtins__": safe, "__name__": "sandboxed_service"}
    try:
        exec(code, ns)  # the module, under the hook and the limits
    except MemoryError:
        die("memory", "the module ran out of memory while loading")
    except BaseException as e:  # noqa: BLE001
        say({"error": f"the module failed to load: {type(e).__name__}: {e}"[:300]})
        os._exit(4)
    classes = [v for v in ns.values() if isinstance(v, type) and issubclass(v, Service) and v is not Service]
    if not classes:
        say({"violation": "no_service", "detail": "the module defines no Service subclass"})
        os._exit(5)
    cls = classes[-1]
    loaded[0] = True
    try:
        env = Environment([cls], seed=seed, size="small")
        # the sandbox is the one bound on the module: the parent's wall-clock kill per request and
        # this process's rlimits. The engine's own per-call limits would race them here (2 s of
        # this thread's CPU against the parent's `seconds` of wall clock: a loop came back as a 422
        # on a quiet machine and as the sandbox's timeout on a busy one), and its watchdog is a
        # thread (which the hook refuses where Python audits thread starts)
        env.limits = None
    except MemoryError:
        die("memory", "seeding ran out of memory")
    except BaseException as e:  # noqa: BLE001
        say({"error": f"seeding failed: {type(e).__name__}: {e}"[:300]})
        os._exit(4)
    for line in sys.stdin:
        try:
            msg = json.loads(line)
            op = msg.get("op")
            if op == "ready":
                specs = {
                    n: {"input_schema": s.input_schema, "mutates": s.mutates}
                    for n, s in cls.tool_specs.items()
                }
                say({"service": cls.name, "tools": specs})
            elif op == "run":  # one call on the state the engine holds: its tables in, its tables out
                st = msg["state"]
                env.restore({"clock": st["clock"], "services": {cls.name: st["tables"]}})
                spec = cls.tool_specs.get(msg["tool"])
                r = env.call(f"{cls.name}__{msg['tool']}", msg.get("args"))
                wrote = r.get("success") is True and (spec is None or spec.mutates)
                say({"envelope": r, "tables": env.snapshot()["services"][cls.name] if wrote else None})
            else:
                say({"error": f"unknown op {op!r}"})
        except MemoryError:
            die("memory", "a call ran out of memory")
        except RecursionError:
            die("crash", "recursion too deep")


# ---- spec-derived tests --------------------------------------------------------------------
def _schema_matches(spec_schema: dict[str, Any], got: dict[str, Any]) -> str | None:
    """None when the implementation declares the spec's parameters (names, required, JSON types)."""
    want_p, got_p = spec_schema.get("properties") or {}, got.get("properties") or {}
    if set(want_p) != set(got_p):
        return f"parameters {sorted(got_p)} are not the spec's {sorted(want_p)}"
    if set(spec_schema.get("required") or []) != set(got.get("required") or []):
        return f"required {sorted(got.get('required') or [])} is not the spec's {sorted(spec_schema.get('required') or [])}"

    def types(s: dict[str, Any]) -> set[str]:
        t = s.get("type")
        out = set(t) if isinstance(t, list) else {t} if t else set()
        for alt in s.get("anyOf", []) or []:
            out |= types(alt)
        return out - {"null"}

    for p, s in want_p.items():
        if types(s) and types(got_p[p]) and not types(s) & types(got_p[p]):
            return f"'{p}' is {sorted(types(got_p[p]))}, the spec says {sorted(types(s))}"
    return None


def _ids(data: Any) -> list[str]:
    """Id-like values in a result (`id`, `*_id`, `*Id`), most direct first."""
    out: list[str] = []

    def walk(o: Any, depth: int) -> None:
        if depth > 3:
            return
        if isinstance(o, dict):
            for k, v in o.items():
                if isinstance(v, str | int) and not isinstance(v, bool) and re.fullmatch(r"id|.*_id|.*Id", k):
                    out.append(str(v))
            for v in o.values():
                walk(v, depth + 1)
        elif isinstance(o, list):
            for v in o[:3]:
                walk(v, depth + 1)

    walk(data, 0)
    return out


def _expect_error(env: Any, full: str, args: dict[str, Any], code: int, what: str) -> str | None:
    before = env.state_hash()
    r = env.call(full, args)
    if r.get("success"):
        return f"{what}: the call succeeded"
    if r["error"]["code"] != code:
        return f"{what}: expected {code}, got {r['error']['code']} ({r['error']['message'][:120]})"
    if env.state_hash() != before:
        return f"{what}: a failed call changed the state"
    return None


def tool_tests(
    env: Any, svc: Any, manifest: dict[str, Any], t: dict[str, Any], rng: random.Random
) -> list[str]:
    """Spec-derived tests of one tool of the implemented service (kept and compiled tools share
    its state): the failures (empty: kept)."""
    from compoworld.compiler.values import NoValue, sample, wrong_type

    schema = t["input_schema"]
    props, required = schema.get("properties") or {}, list(schema.get("required") or [])
    op = t.get("op") or {}
    kind = op.get("kind", "")
    full = f"{svc.name}__{t['name']}"
    fails: list[str] = []
    env.restore(env.initial)
    by_kind = {
        (x.get("op") or {}).get("kind"): x
        for x in manifest["tools"]
        if (x.get("op") or {}).get("resource") == op.get("resource") and op.get("resource")
    }

    def args_for(tool: dict[str, Any], known_id: str | None = None) -> dict[str, Any]:
        sch = tool["input_schema"]
        out: dict[str, Any] = {}
        idp = (tool.get("op") or {}).get("id_param")
        for p in sch.get("required") or []:
            ps = (sch.get("properties") or {}).get(p, {})
            if known_id is not None and p == idp:
                out[p] = int(known_id) if ps.get("type") == "integer" and known_id.isdigit() else known_id
                continue
            try:
                out[p] = sample(ps, p, rng)
            except NoValue:
                out[p] = "x"
        return out

    def call(tool: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        return env.call(f"{svc.name}__{tool['name']}", args)

    known: str | None = None  # a record to work on: one the seeded state holds, else one made by create
    idp = op.get("id_param")
    create = by_kind.get("create")
    table = (manifest.get("resources") or {}).get(op.get("resource"), {}).get("table")
    if idp and table and svc.table(table):
        known = sorted(svc.table(table))[0]
    elif idp and create is not None and create is not t:
        r = call(create, args_for(create))
        known = next(iter(_ids(r.get("data"))), None) if r.get("success") else None
    args = args_for(t, known)
    for p in required:
        if why := _expect_error(env, full, {k: v for k, v in args.items() if k != p}, 400, f"missing '{p}'"):
            fails.append(why)
    for p, ps in props.items():
        try:
            bad = wrong_type(ps)
        except NoValue:
            continue
        if why := _expect_error(env, full, {**args, p: bad}, 400, f"wrong type for '{p}'"):
            fails.append(why)
        break
    if idp and idp in props and props[idp].get("type") in (None, "string", "integer"):
        probe = 987654321 if props[idp].get("type") == "integer" else "zz-unknown-000"
        if why := _expect_error(env, full, {**args, idp: probe}, 404, f"unknown id in '{idp}'"):
            fails.append(why)
    if idp and known is None:
        fails.append("no record of its resource to test with")
        return fails
    r = env.call(full, args)
    if not r.get("success"):
        fails.append(f"a valid call failed: {r['error']['code']} {r['error']['message'][:160]}")
        return fails
    # semantics: what the call did is visible to the resource's reads
    get = by_kind.get("get")
    made = known or next(iter(_ids(r.get("data"))), None)
    if kind == "create" and get is not None and made is not None:
        g = call(get, args_for(get, made))
        text = json.dumps(g.get("data"), default=str)
        missing = [p for p, v in args.items() if isinstance(v, str) and len(v) > 2 and v not in text]
        if not g.get("success"):
            fails.append(
                f"create then {get['name']} does not find the record ({g['error']['message'][:120]})"
            )
        elif missing:
            fails.append(f"create then {get['name']} does not show {missing}")
    if kind == "delete" and get is not None and made is not None:
        g = call(get, args_for(get, made))
        if g.get("success") or g["error"]["code"] != 404:
            fails.append(f"delete then {get['name']} still finds the record")
    if kind == "update" and get is not None and made is not None:
        g = call(get, args_for(get, made))
        text = json.dumps(g.get("data"), default=str)
        changed = [v for p, v in args.items() if p != idp and isinstance(v, str) and len(v) > 2]
        if not g.get("success") or any(v not in text for v in changed):
            fails.append(f"update then {get['name']} does not show the change")
    if kind in ("list", "search") and not isinstance(r.get("data"), list | dict):
        fails.append("a list answers no list")
    return fails


def compiler_tests(env: Any, svc: Any, manifest: dict[str, Any], t: dict[str, Any], seed: int) -> list[str]:
    """The compiler's own adversarial suite for a tool it compiled (`spec.adversarial`), run on the
    implementation: bounds, stated rules, bad input, and each kind's semantics."""
    if t.get("status") != "compiled" or (t.get("op") or {}).get("kind") in ("dispatch", "simulated"):
        return []
    from compoworld.compiler.adversarial import Failed, _run
    from compoworld.compiler.values import NoValue

    by_name = {x["name"]: x for x in manifest["tools"]}
    env.restore(env.initial)
    try:
        _run(env, svc, t, by_name, random.Random(f"{seed}:{t['name']}"))
    except Failed as e:
        return [f"{e.cause}: {e}"]
    except NoValue as e:
        return [f"cannot_make_arguments: {e}"]
    except (KeyError, TypeError, IndexError, AttributeError):
        # the suite reads results in the compiler's own shapes (a list as {"items": ...}); a spec that
        # states no output shape leaves the module free to answer in another: inconclusive, not failed
        return []
    return []


# ---- the implemented service: kept tools in the sandbox, the rest compiled, one state --------
class _Pool:
    """Sandboxes of one module, one per concurrent call (at most `size`): a slow call of one session
    holds only its own worker, and a stopped worker is replaced. Under test a given sandbox is the
    only one, and is never replaced (its violation is the result)."""

    def __init__(self, code: str, limits: Limits, fixed: Sandbox | None, size: int = 4) -> None:
        import threading

        self.code, self.limits, self.fixed, self.size = code, limits, fixed, size
        self.idle: list[Sandbox] = []
        self.count = 0
        self.cond = threading.Condition()
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def worker(self) -> Any:
        if self.fixed is not None:
            with self.lock:
                if self.fixed.violation is not None:
                    raise self.fixed.violation
                yield self.fixed
            return
        with self.cond:
            while not self.idle and self.count >= self.size:
                self.cond.wait()
            w = self.idle.pop() if self.idle else None
            if w is None:
                self.count += 1
        try:
            if w is None:
                w = Sandbox(self.code, self.limits)
            yield w
        finally:
            with self.cond:
                if w is not None and w.violation is None:
                    self.idle.append(w)
                else:
                    self.count -= 1
                self.cond.notify()


def implemented_service(
    manifest: dict[str, Any], code: str, kept: Any, limits: Limits = Limits(), sandbox: Sandbox | None = None
) -> type:
    """The manifest's service with the `kept` tools served by the module in a sandbox. The engine
    holds the state: each kept call sends the service's tables to the sandbox and gets them back
    only if the call wrote; the new tables must fit the service's typed model (else a 500 and
    nothing changes). Arguments are checked against the spec's schema first, as compiled tools
    check them. Nothing of the module runs in this process."""
    from compoworld.compiler.runtime import service_from_manifest
    from compoworld.core.envelope import failure
    from compoworld.core.service import decode_arguments
    from compoworld.core.state import META

    base = service_from_manifest(manifest)
    kept = frozenset(kept)
    pool = _Pool(code, limits, sandbox)
    stopped: list[Violation] = []  # the violations that ended a sandbox, latest last

    class Implemented(base):  # type: ignore[misc, valid-type]
        implementation = {"kept": sorted(kept), "runs_in": "sandbox"}
        violations = stopped

        def invoke(self, spec: Any, arguments: Any) -> dict[str, Any]:
            if spec.name not in kept:
                return super().invoke(spec, arguments)
            arguments, rejected = decode_arguments(spec.name, arguments)
            if rejected is not None:
                return rejected
            from compoworld.core.schema import schema_violations

            bad = schema_violations(self._validator(spec), arguments, spec.name)
            if bad:
                return failure(400, "invalid_arguments", bad)
            state = {"clock": self.clock.iso(), "tables": self.store.tables}
            try:
                with pool.worker() as w:
                    env, tables = w.run(state, spec.name, arguments)
            except Violation as v:
                stopped.append(v)
                return failure(
                    500,
                    "server_error",
                    f"{spec.name}: the sandboxed implementation was stopped ({v.cause}: {v.detail})",
                )
            if not env.get("success") or tables is None:
                return env
            try:
                if self.state_model is not None:
                    self.state_model.model_validate({k: v for k, v in tables.items() if k != META})
            except Exception as e:  # noqa: BLE001 (pydantic's ValidationError: the write is refused)
                first = str(e).splitlines()[:2]
                return failure(
                    500,
                    "server_error",
                    f"{spec.name} wrote a state the service's model refuses: {' '.join(first)}",
                )
            for t, recs in tables.items():
                old = self.store.tables.get(t, {})
                for k in [k for k in old if k not in recs]:
                    self.store.delete(t, k)
                for k, r in recs.items():
                    if old.get(k) != r:
                        self.store.put(t, k, r)
            self.store.commit()
            return env

    Implemented.tool_specs = base.tool_specs  # the spec's names and schemas, as compiled
    Implemented.__name__ = Implemented.__qualname__ = base.__name__
    return Implemented


def load_implemented(where: str | Path, limits: Limits = Limits()) -> type:
    """The service `spec implement` wrote (its folder, or the manifest.json in it, beside service.py)."""
    path = Path(where)
    root, mpath = (path, path / "manifest.json") if path.is_dir() else (path.parent, path)
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    code = (root / "service.py").read_text(encoding="utf-8") if (root / "service.py").exists() else ""
    kept = manifest.get("implemented") or []
    if kept and not code:
        raise ValueError(f"{root}: the manifest keeps {kept} from a module, but there is no service.py")
    return (
        implemented_service(manifest, code, kept, limits)
        if kept
        else __import__("compoworld.compiler.runtime", fromlist=["service_from_manifest"]).service_from_manifest(
            manifest
        )
    )


# ---- the agent -------------------------------------------------------------------------------
API_NOTES = '''Write ONE Python module. Use only these imports: {imports}.
The service is a subclass of compoworld.core.service.Service:

from compoworld.core.service import Service
from compoworld.core.tool import tool
from compoworld.core.envelope import InvalidArguments, NotFound, Conflict, RuleViolation

class NotesService(Service):
    """One line on what it is."""
    name = "{name}"
    domain = "productivity"

    @tool(mutates=True)
    def create_note(self, title: str, body: str = "") -> dict:
        """Create a note.

        Args:
            title: The title
            body: The text
        """
        if not title:
            raise InvalidArguments("'title' must not be empty")     # -> 400
        rec = {{"id": self.next_id("n"), "title": title, "body": body}}
        self.insert("notes", rec)                                  # tables: self.table(name) to read
        return rec

    @tool
    def get_note(self, note_id: str) -> dict:
        """Get a note.

        Args:
            note_id: The note id
        """
        rec = self.table("notes").get(note_id)
        if rec is None:
            raise NotFound(f"note {{note_id!r}} not found")            # -> 404
        return rec

Write with self.insert(table, record), self.update(table, key, **fields), self.remove(table, key); ids from
self.next_id(prefix); time from self.clock.iso(). Tool names, parameter names and types must be exactly
the spec's. The service's state is shared with the engine's own tools, so keep records in exactly these
tables and fields (records are keyed by "id"): {layout}
Reply with the module in one ```python block.'''


def state_layout(manifest: dict[str, Any]) -> dict[str, Any]:
    """The tables the service keeps and each record's fields, as the compiled service stores them."""
    out = {}
    for r in (manifest.get("resources") or {}).values():
        out[r["table"]] = {"id": "string", "created_at": "ISO time", **r.get("fields", {})}
    return out


def implement_messages(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    tools = [
        {
            "name": t["name"],
            "description": (t.get("description") or "")[:400],
            "input_schema": t["input_schema"],
        }
        for t in manifest["tools"]
    ]
    return [
        {
            "role": "system",
            "content": API_NOTES.format(
                imports=", ".join(sorted(ALLOWED_IMPORTS)),
                name=manifest["service"],
                layout=json.dumps(state_layout(manifest)),
            ),
        },
        {
            "role": "user",
            "content": f"Implement the service {manifest['service']!r} with these tools:\n"
            + json.dumps(tools, ensure_ascii=False),
        },
    ]


def extract_code(text: str | None) -> str | None:
    if not text:
        return None
    blocks = re.findall(r"```(?:python|py)?\s*\n(.*?)```", text, re.S)
    if blocks:
        return max(blocks, key=len)
    return text if "class " in text and "Service" in text else None


def evaluate(code: str, manifest: dict[str, Any], limits: Limits = Limits(), seed: int = 0) -> dict[str, Any]:
    """Run the tests of every tool on the implemented service (the module in the sandbox, the
    state in the engine): per tool kept or not (with why), and any violation."""
    from compoworld.core.environment import Environment

    report: dict[str, Any] = {"violation": None, "tools": {}}
    try:
        sb = Sandbox(code, limits, seed)
    except Violation as e:
        report["violation"] = {"cause": e.cause, "detail": e.detail}
        return report
    try:
        if "error" in sb.ready:
            report["violation"] = {"cause": "crash", "detail": sb.ready["error"]}
            return report
        declared = sb.ready.get("tools") or {}
        candidates = []
        for t in manifest["tools"]:
            name = t["name"]
            if name not in declared:
                report["tools"][name] = {"kept": False, "why": ["not implemented"]}
            elif (t.get("op") or {}).get("kind") == "dispatch":
                report["tools"][name] = {"kept": False, "why": ["action-dispatch tools stay compiled"]}
            elif mismatch := _schema_matches(t["input_schema"], declared[name]["input_schema"]):
                report["tools"][name] = {"kept": False, "why": [f"schema: {mismatch}"]}
            else:
                candidates.append(t)
        cls = implemented_service(manifest, code, [t["name"] for t in candidates], limits, sb)
        env = Environment([cls], seed=seed, size="small")
        svc = env.services[cls.name]
        for t in candidates:
            fails = tool_tests(env, svc, manifest, t, random.Random(f"{seed}:{t['name']}"))
            if not cls.violations:
                fails += compiler_tests(env, svc, manifest, t, seed)
            if cls.violations:
                raise cls.violations[0]
            report["tools"][t["name"]] = {"kept": not fails, "why": fails}
    except Violation as e:
        report["violation"] = {"cause": e.cause, "detail": e.detail}
        for t in manifest["tools"]:  # a module that broke a rule keeps nothing
            r = report["tools"].setdefault(t["name"], {"kept": False, "why": []})
            r["kept"], r["why"] = False, [*r["why"], f"sandbox: {e.cause}: {e.detail}"]
    finally:
        sb.close()
    return report


async def implement(
    spec: str | Path, client: Any, out: Path, limits: Limits = Limits(), seed: int = 0, rounds: int = 1
) -> dict[str, Any]:
    """Write, sandbox-test and keep what passes; `out` gets service.py, manifest.json and report.json."""
    from compoworld.compiler.adversarial import compile_spec
    from compoworld.llm.client import EndpointError

    manifest = compile_spec(spec, None, seed)
    messages = implement_messages(manifest)
    attempts: list[dict[str, Any]] = []
    best: tuple[int, str, dict[str, Any]] | None = None
    for _ in range(rounds + 1):
        try:
            reply = await client.chat(messages)
        except EndpointError as e:
            attempts.append({"error": f"endpoint: {str(e)[:300]}"})
            break
        text = reply.message.get("content") or ""
        code = extract_code(text)
        if code is None:
            attempts.append({"error": "no Python module in the reply"})
            report = None
            feedback = "Reply with the whole module in one ```python block."
        else:
            report = evaluate(code, manifest, limits, seed)
            kept = sum(r["kept"] for r in report["tools"].values())
            attempts.append({"violation": report["violation"], "kept": kept})
            if best is None or kept > best[0]:
                best = (kept, code, report)
            if report["violation"] is None and all(r["kept"] for r in report["tools"].values()):
                break
            feedback = json.dumps(
                {
                    "violation": report["violation"],
                    "failing": {n: r["why"] for n, r in report["tools"].items() if not r["kept"]},
                },
                ensure_ascii=False,
            )[:6000]
        messages += [
            {"role": "assistant", "content": text},
            {"role": "user", "content": f"Tests: {feedback}. Fix the module."},
        ]
    out.mkdir(parents=True, exist_ok=True)
    kept_names: list[str] = []
    report = best[2] if best else {"violation": None, "tools": {}}
    if best is not None:
        (out / "service.py").write_text(best[1], encoding="utf-8")
        kept_names = sorted(n for n, r in report["tools"].items() if r["kept"])
    for t in manifest["tools"]:
        r = report["tools"].get(t["name"], {"kept": False, "why": ["no module"]})
        if r["kept"]:
            t["implementation"] = "sandbox"
        t["implement_tests"] = r
    manifest["implemented"] = kept_names
    summary = {
        "service": manifest["service"],
        "model": getattr(getattr(client, "config", None), "model", None),
        "kept": kept_names,
        "fallback": {
            t["name"]: t["status"] for t in manifest["tools"] if t["name"] not in kept_names
        },  # compiled (code) or simulated (world model), as the compiler left them
        "violation": report.get("violation"),
        "attempts": attempts,
    }
    (out / "manifest.json").write_text(
        json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (out / "report.json").write_text(
        json.dumps({**summary, "tools": report["tools"]}, indent=1, default=str) + "\n", encoding="utf-8"
    )
    return summary

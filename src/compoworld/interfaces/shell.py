"""A POSIX-like shell over a virtual file tree: nothing runs on the host, no path leaves the tree.

Supported: `ls cat head tail grep wc sort uniq cut find mkdir touch cp mv rm echo pwd cd true false`,
plus `csv` (cols, select, where, join) and `jq` (paths like `.a.b`, `.[0]`, `.[]`, `keys`, `length`).
Pipes `|`, sequences `;` `&&` `||`, redirection `>` `>>` `<`, single and double quotes. Unknown
commands exit 127. Output, files and pipelines are bounded, so huge outputs and fork bombs are contained.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import regex

from compoworld.core import limits
from compoworld.interfaces import matcher

MAX_OUTPUT = 256 * 1024  # bytes of stdout a call returns
MAX_FILE = 1024 * 1024  # bytes in one file
MAX_FILES = 5000
MAX_TREE_BYTES = 16 * 1024 * 1024  # default byte budget of a whole tree (paths + file contents)
MAX_STAGES = 64  # commands in one command line


class ShellError(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class QuotaExceeded(ShellError):
    """A write would take the tree past its byte budget. Unlike other errors it is not a failed
    command inside the line: it aborts the whole command line, so the caller can refuse the call
    and undo every write it made (a failed call changes nothing)."""


def entry_bytes(path: str, text: str | None) -> int:
    """What one entry costs against the tree's budget: its path and its UTF-8 content."""
    return len(path.encode()) + (len(text.encode()) if text else 0)


class FileTree:
    """What the shell needs from its store: absolute normalised paths -> file text, or None for a dir."""

    def __init__(
        self,
        entries: dict[str, str | None],
        write: Callable[[str, str | None], None],
        delete: Callable[[str], None],
        used: int | None = None,
        quota: int | None = MAX_TREE_BYTES,
    ) -> None:
        self.entries = entries
        self._write = write
        self._delete = delete
        # bytes the tree holds now (see `entry_bytes`); counted here unless the caller knows it
        self.used = sum(entry_bytes(k, v) for k, v in entries.items()) if used is None else used
        self.quota = quota

    def _grow(self, p: str, text: str | None, new_bytes: int | None = None) -> None:
        """Charge writing `text` at `p` against the quota, or raise `QuotaExceeded` (nothing written)."""
        old = self.entries.get(p, _ABSENT)
        before = 0 if old is _ABSENT else entry_bytes(p, old)
        after = len(p.encode()) + (new_bytes if new_bytes is not None else len((text or "").encode()))
        if self.quota is not None and after > before and self.used + after - before > self.quota:
            raise QuotaExceeded(
                f"{p}: workspace quota exceeded: this write would bring the workspace to "
                f"{self.used + after - before} bytes, over its budget of {self.quota} bytes "
                "(remove files first)"
            )
        self.used += after - before

    def is_dir(self, p: str) -> bool:
        return p == "/" or (p in self.entries and self.entries[p] is None)

    def is_file(self, p: str) -> bool:
        return self.entries.get(p) is not None

    def exists(self, p: str) -> bool:
        return p == "/" or p in self.entries

    def children(self, p: str) -> list[str]:
        prefix = p.rstrip("/") + "/"
        return sorted(k for k in self.entries if k.startswith(prefix) and "/" not in k[len(prefix) :])

    def descendants(self, p: str) -> list[str]:
        prefix = p.rstrip("/") + "/"
        return sorted(k for k in self.entries if k.startswith(prefix))

    def read(self, p: str) -> str:
        if self.is_dir(p):
            raise ShellError(f"{p}: Is a directory")
        if p not in self.entries:
            raise ShellError(f"{p}: No such file or directory")
        return self.entries[p] or ""

    def write(self, p: str, text: str) -> None:
        size = len(text.encode())
        if size > MAX_FILE:
            raise ShellError(f"{p}: File too large (limit {MAX_FILE} bytes)")
        parent = posixpath.dirname(p)
        if not self.is_dir(parent):
            raise ShellError(f"{p}: No such file or directory")
        if self.is_dir(p):
            raise ShellError(f"{p}: Is a directory")
        if p not in self.entries and len(self.entries) >= MAX_FILES:
            raise ShellError(f"{p}: No space left on device (limit {MAX_FILES} entries)")
        self._grow(p, text, size)
        self.entries[p] = text
        self._write(p, text)

    def mkdir(self, p: str) -> None:
        if self.exists(p):
            raise ShellError(f"{p}: File exists")
        if not self.is_dir(posixpath.dirname(p)):
            raise ShellError(f"{p}: No such file or directory")
        if p not in self.entries and len(self.entries) >= MAX_FILES:
            raise ShellError(f"{p}: No space left on device (limit {MAX_FILES} entries)")
        self._grow(p, None)
        self.entries[p] = None
        self._write(p, None)

    def remove(self, p: str) -> None:
        self.used -= entry_bytes(p, self.entries[p])
        del self.entries[p]
        self._delete(p)


_ABSENT: object = object()


@dataclass
class Result:
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    cwd: str = "/"
    truncated: bool = False


@dataclass
class _Ctx:
    tree: FileTree
    cwd: str
    stderr: list[str] = field(default_factory=list)

    def path(self, p: str) -> str:
        """Resolve against the cwd inside the tree; `..` stops at the root, so nothing escapes."""
        if "\x00" in p:
            raise ShellError("path contains a NUL byte")
        full = posixpath.normpath(posixpath.join(self.cwd, p))
        return "/" + full.lstrip("/") if full != "/" else "/"


def run(tree: FileTree, command: str, cwd: str = "/") -> Result:
    """Run one command line; returns stdout, stderr, the last exit code and the final cwd.

    Raises `QuotaExceeded` when a write would take the tree past its byte budget."""
    ctx = _Ctx(tree, cwd)
    tokens = _lex(command)
    if isinstance(tokens, str):
        return Result("", f"sh: syntax error: {tokens}\n", 2, cwd)
    try:
        seqs = _sequences(list(tokens))
    except ShellSyntax as e:
        return Result("", f"{e}\n", 2, cwd)
    out: list[str] = []
    code = 0
    stages = 0
    for op, pipeline in seqs:
        if (op == "&&" and code != 0) or (op == "||" and code == 0):
            continue
        stages += len(pipeline)
        if stages > MAX_STAGES:
            ctx.stderr.append(f"sh: too many commands in one line (limit {MAX_STAGES})\n")
            code = 2
            break
        try:
            text, code = _pipeline(ctx, pipeline)
        except QuotaExceeded:
            raise
        except ShellError as e:
            ctx.stderr.append(f"{e}\n")
            text, code = "", e.code
        out.append(text)
    stdout = "".join(out)
    truncated = len(stdout.encode()) > MAX_OUTPUT
    if truncated:
        stdout = stdout.encode()[:MAX_OUTPUT].decode(errors="ignore")
        ctx.stderr.append(f"sh: output truncated at {MAX_OUTPUT} bytes\n")
    return Result(stdout, "".join(ctx.stderr), code, ctx.cwd, truncated)


def lex_words(command: str, posix: bool) -> tuple[str, ...] | str:
    """The words of a command line (shlex, with `|;&<>` as punctuation), or the lexer's complaint:
    a pure function of the text, kept for lines of up to 2 KB (replays and adversaries run the
    same lines again; the kept ones take at most 2 MB)."""
    return _lex_kept(command, posix) if len(command) <= 2048 else _lex_words(command, posix)


@lru_cache(maxsize=1024)
def _lex_kept(command: str, posix: bool) -> tuple[str, ...] | str:
    return _lex_words(command, posix)


def _lex_words(command: str, posix: bool) -> tuple[str, ...] | str:
    try:
        lexer = shlex.shlex(command, posix=posix, punctuation_chars="|;&<>")
        lexer.whitespace_split = True
        lexer.commenters = ""
        return tuple(lexer)
    except ValueError as e:
        return str(e)


def _lex(command: str) -> tuple[str, ...] | str:
    return lex_words(command, True)


# the commands that never write the tree (whatever it holds); the others may (mkdir, touch, cp...)
READS_ONLY = frozenset(
    ("echo", "pwd", "cd", "ls", "cat", "head", "tail", "grep", "wc", "sort", "uniq", "cut", "find")
    + ("true", "false", "csv", "jq")
)


def reads_only(command: str) -> bool:
    """Whether the line writes nothing whatever the tree holds: each of its commands is one of
    `READS_ONLY` and nothing is redirected into a file. A glob (it expands to names), a line that
    does not lex, or any other word where a command goes: it may write."""
    if "*" in command or "?" in command:
        return False
    tokens = _lex(command)
    if isinstance(tokens, str):
        return False
    head = True
    for t in tokens:
        if t in (">", ">>"):
            return False
        if t in ("|", ";", "&&", "||"):
            head = True
        elif head:
            if t not in READS_ONLY:
                return False
            head = False
    return True


def _sequences(tokens: list[str]) -> list[tuple[str, list[list[str]]]]:
    """Split into (operator before, pipeline) where a pipeline is a list of commands (token lists)."""
    seqs: list[tuple[str, list[list[str]]]] = []
    op = ";"
    cmd: list[str] = []
    pipe: list[list[str]] = []
    for t in tokens:
        if t in (";", "&&", "||"):
            if cmd:
                pipe.append(cmd)
            if not pipe:
                raise_syntax(t)
            seqs.append((op, pipe))
            op, cmd, pipe = t, [], []
        elif t == "|":
            if not cmd:
                raise_syntax(t)
            pipe.append(cmd)
            cmd = []
        elif t == "&" or (set(t) <= set("|;&<>") and t not in (">", ">>", "<")):
            raise_syntax(t)
        else:
            cmd.append(t)
    if cmd:
        pipe.append(cmd)
    elif pipe:
        raise_syntax("|")
    if pipe:
        seqs.append((op, pipe))
    return seqs


def raise_syntax(t: str) -> None:
    raise ShellSyntax(
        f"sh: syntax error near unexpected token '{t}' (background jobs, functions and subshells are not supported)"
    )


class ShellSyntax(ValueError):
    pass


def _pipeline(ctx: _Ctx, pipeline: list[list[str]]) -> tuple[str, int]:
    data: str | None = None
    code = 0
    for argv in pipeline:
        argv, redirect, source = _redirects(argv)
        if source is not None:
            data = ctx.tree.read(ctx.path(source))
        if not argv:
            raise ShellError("sh: missing command", 2)
        fn = COMMANDS.get(argv[0])
        if fn is None:
            ctx.stderr.append(f"sh: {argv[0]}: command not found\n")
            data, code = "", 127
            continue
        try:
            data, code = fn(ctx, argv[1:], data)
        except QuotaExceeded:
            raise
        except ShellError as e:
            ctx.stderr.append(f"{argv[0]}: {e}\n")
            data, code = "", e.code
        if len(data.encode()) > MAX_FILE * 4:
            raise ShellError(f"{argv[0]}: output too large", 1)
        if redirect is not None:
            mode, target = redirect
            p = ctx.path(target)
            prev = ctx.tree.read(p) if mode == ">>" and ctx.tree.is_file(p) else ""
            ctx.tree.write(p, prev + data)
            data = ""
    return data or "", code


def _redirects(argv: list[str]) -> tuple[list[str], tuple[str, str] | None, str | None]:
    out: list[str] = []
    redirect = None
    source = None
    i = 0
    while i < len(argv):
        t = argv[i]
        if t in (">", ">>", "<"):
            if i + 1 >= len(argv):
                raise ShellError(f"sh: syntax error: '{t}' needs a file", 2)
            if t == "<":
                source = argv[i + 1]
            else:
                redirect = (t, argv[i + 1])
            i += 2
            continue
        out.append(t)
        i += 1
    return out, redirect, source


# ---- option parsing ------------------------------------------------------------------------
def _opts(
    args: list[str], flags: str, valued: str = "", repeated: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """Short options (`-in`, `-n 5`, `-n5`); `--` ends them. Unknown options are usage errors. A
    `repeated` option may come more than once (`grep -e a -e b`): its values are a list."""
    opts: dict[str, Any] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            rest.extend(args[i + 1 :])
            break
        if a.startswith("-") and len(a) > 1 and not re.fullmatch(r"-\d+", a):
            j = 1
            while j < len(a):
                c = a[j]
                if c in valued:
                    val = a[j + 1 :] or (args[i + 1] if i + 1 < len(args) else None)
                    if val is None:
                        raise ShellError(f"option requires an argument -- '{c}'", 2)
                    if not a[j + 1 :]:
                        i += 1
                    if c in repeated:
                        opts.setdefault(c, []).append(val)
                    else:
                        opts[c] = val
                    break
                if c not in flags:
                    raise ShellError(f"invalid option -- '{c}'", 2)
                opts[c] = True
                j += 1
        else:
            rest.append(a)
        i += 1
    return opts, rest


def _inputs(ctx: _Ctx, files: list[str], stdin: str | None) -> list[tuple[str, str]]:
    if not files:
        return [("-", stdin or "")]
    return [(f, ctx.tree.read(ctx.path(f))) for f in files]


def _lines(text: str) -> list[str]:
    return text.splitlines()


def _join(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


# ---- commands ------------------------------------------------------------------------------
def c_echo(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    newline = True
    if args[:1] == ["-n"]:
        newline, args = False, args[1:]
    return " ".join(args) + ("\n" if newline else ""), 0


def c_pwd(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    return ctx.cwd + "\n", 0


def c_cd(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    p = ctx.path(args[0]) if args else "/"
    if not ctx.tree.is_dir(p):
        raise ShellError(f"{args[0]}: No such directory")
    ctx.cwd = p
    return "", 0


def c_ls(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    opts, paths = _opts(args, "la1R")
    out: list[str] = []
    code = 0
    for a in paths or ["."]:
        p = ctx.path(a)
        if not ctx.tree.exists(p):
            ctx.stderr.append(f"ls: cannot access '{a}': No such file or directory\n")
            code = 2
            continue
        if ctx.tree.is_file(p):
            out.append(_ls_line(ctx, p, a, opts))
            continue
        _ls_dir(ctx, p, a, opts, out, header=len(paths) > 1 or bool(opts.get("R")))
    return _join(out), code


def _ls_dir(ctx: _Ctx, p: str, shown: str, opts: dict, out: list[str], header: bool) -> None:
    """One directory's entries (under a `shown:` header where several are listed); with -R, then
    each subdirectory's, depth first, as `ls -R` does."""
    if header:
        out.append(("\n" if out else "") + f"{shown}:")
    subdirs = []
    for child in ctx.tree.children(p):
        name = posixpath.basename(child)
        if name.startswith(".") and not opts.get("a"):
            continue
        is_dir = ctx.tree.is_dir(child)
        out.append(_ls_line(ctx, child, name + ("/" if is_dir and not opts.get("l") else ""), opts))
        if is_dir:
            subdirs.append((child, posixpath.join(shown, name)))
    if opts.get("R"):
        for child, name in subdirs:
            _ls_dir(ctx, child, name, opts, out, header=True)


def _ls_line(ctx: _Ctx, p: str, shown: str, opts: dict) -> str:
    if not opts.get("l"):
        return shown
    if ctx.tree.is_dir(p):
        return f"d {0:>8} {shown}"
    return f"- {len(ctx.tree.read(p).encode()):>8} {shown}"


def c_cat(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    opts, files = _opts(args, "n")
    text = "".join(t for _, t in _inputs(ctx, files, stdin))
    if opts.get("n"):
        text = _join(f"{i:6d}\t{line}" for i, line in enumerate(_lines(text), 1))
    return text, 0


def _count(args: list[str]) -> tuple[int, list[str]]:
    if args and re.fullmatch(r"-\d+", args[0]):
        return int(args[0][1:]), args[1:]
    opts, rest = _opts(args, "", "n")
    n = opts.get("n", "10")
    if not str(n).lstrip("+-").isdigit():
        raise ShellError(f"invalid number of lines: '{n}'", 2)
    return int(str(n)), rest


def c_head(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    n, files = _count(args)
    return "".join(_join(_lines(t)[:n]) for _, t in _inputs(ctx, files, stdin)), 0


def c_tail(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    n, files = _count(args)
    return "".join(_join(_lines(t)[-n:] if n else []) for _, t in _inputs(ctx, files, stdin)), 0


def c_grep(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    opts, rest = _opts(args, "inrcvlE", "e", repeated="e")
    if "e" in opts:  # each -e is a pattern of its own: a line matching any of them matches
        pattern = "|".join(f"(?:{p})" for p in opts["e"]) if len(opts["e"]) > 1 else opts["e"][0]
    elif rest:
        pattern, rest = rest[0], rest[1:]
    else:
        raise ShellError("usage: grep [-i -n -r -c -v -l] PATTERN [FILE...]", 2)
    flags = regex.I if opts.get("i") else 0
    try:
        rx = regex.compile(pattern, flags)
    except (regex.error, OverflowError, RecursionError) as e:
        raise ShellError(f"invalid pattern: {e}", 2) from None

    def matches(line: str) -> bool:
        # A backtracking pattern can take exponential time inside C: a line slower than a few ms
        # moves to a helper process at idle priority (interfaces/matcher.py), bounded by what is
        # left of the call's time, so it takes neither the GIL nor CPU from other sessions.
        limits.checkpoint()  # many lines take turns with others
        try:
            found = matcher.search(rx, pattern, flags, line, limits.remaining())
        except matcher.SlowMatchError as e:
            raise ShellError(f"grep: {e}", 2) from None
        if found is None:
            raise ShellError(
                f"grep: pattern {pattern[:60]!r} is too slow to match (stopped at the call's time "
                "limit; nested repeats like (a+)+ backtrack exponentially)",
                2,
            )
        return found

    sources: list[tuple[str, str]] = []
    if opts.get("r"):
        for a in rest or ["."]:
            p = ctx.path(a)
            if ctx.tree.is_dir(p):
                sources += [
                    (posixpath.join(a, k[len(p.rstrip("/")) + 1 :]), ctx.tree.read(k))
                    for k in ctx.tree.descendants(p)
                    if ctx.tree.is_file(k)
                ]
            else:
                sources.append((a, ctx.tree.read(p)))
    else:
        sources = _inputs(ctx, rest, stdin)
    many = len(sources) > 1 or bool(opts.get("r"))
    out: list[str] = []
    found = False
    for name, text in sources:
        hits = [(i, line) for i, line in enumerate(_lines(text), 1) if matches(line) != bool(opts.get("v"))]
        found |= bool(hits)
        if opts.get("l"):
            if hits:
                out.append(name)
        elif opts.get("c"):
            out.append(f"{name}:{len(hits)}" if many else str(len(hits)))
        else:
            for i, line in hits:
                out.append((f"{name}:" if many else "") + (f"{i}:" if opts.get("n") else "") + line)
    return _join(out), 0 if found else 1


def c_wc(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    opts, files = _opts(args, "lwc")
    pick = [k for k in "lwc" if opts.get(k)] or ["l", "w", "c"]
    out = []
    for name, text in _inputs(ctx, files, stdin):
        n = {"l": text.count("\n"), "w": len(text.split()), "c": len(text.encode())}
        out.append(" ".join(str(n[k]) for k in pick) + ("" if name == "-" else f" {name}"))
    return _join(out), 0


def c_sort(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    opts, files = _opts(args, "rnuf", "tk")
    lines = [line for _, t in _inputs(ctx, files, stdin) for line in _lines(t)]
    sep = str(opts["t"]) if "t" in opts else None
    k = int(str(opts["k"]).split(",")[0]) if "k" in opts else None

    def key(line: str):
        v = line
        if k is not None:
            parts = line.split(sep) if sep else line.split()
            v = parts[k - 1] if len(parts) >= k else ""
        if opts.get("f"):
            v = v.casefold()
        if opts.get("n"):
            m = re.match(r"\s*(-?\d+(?:\.\d+)?)", v)
            return (float(m.group(1)) if m else 0.0, v)
        return (0.0, v)

    lines.sort(key=key, reverse=bool(opts.get("r")))
    if opts.get("u"):
        lines = list(dict.fromkeys(lines))
    return _join(lines), 0


def c_uniq(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    opts, files = _opts(args, "cd")
    out: list[tuple[int, str]] = []
    for line in (line for _, t in _inputs(ctx, files, stdin) for line in _lines(t)):
        if out and out[-1][1] == line:
            out[-1] = (out[-1][0] + 1, line)
        else:
            out.append((1, line))
    if opts.get("d"):
        out = [x for x in out if x[0] > 1]
    return _join(f"{n:7d} {line}" if opts.get("c") else line for n, line in out), 0


def c_cut(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    opts, files = _opts(args, "", "df")
    if "f" not in opts:
        raise ShellError("usage: cut -d DELIM -f LIST [FILE...]", 2)
    sep = str(opts.get("d", "\t"))
    fields: list[int] = []
    for part in str(opts["f"]).split(","):
        if "-" in part:
            a, b = part.split("-", 1)
            fields.extend(range(int(a or 1), int(b or 99) + 1))
        elif part.isdigit():
            fields.append(int(part))
        else:
            raise ShellError(f"invalid field list '{opts['f']}'", 2)
    out = []
    for line in (line for _, t in _inputs(ctx, files, stdin) for line in _lines(t)):
        parts = line.split(sep)
        out.append(sep.join(parts[f - 1] for f in fields if f - 1 < len(parts)))
    return _join(out), 0


def c_find(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    roots = []
    i = 0
    while i < len(args) and not args[i].startswith("-"):
        roots.append(args[i])
        i += 1
    name = kind = None
    while i < len(args):
        if args[i] in ("-name", "-iname", "-type") and i + 1 < len(args):
            if args[i] == "-type":
                kind = args[i + 1]
            else:
                name = (args[i + 1], args[i] == "-iname")
            i += 2
        else:
            raise ShellError(f"unknown predicate '{args[i]}' (supported: -name, -iname, -type f|d)", 2)
    out = []
    for r in roots or ["."]:
        p = ctx.path(r)
        if not ctx.tree.exists(p):
            raise ShellError(f"'{r}': No such file or directory")
        for k in [p, *ctx.tree.descendants(p)]:
            shown = r.rstrip("/") + k[len(p.rstrip("/")) :] if k != p else r
            base = posixpath.basename(k) or "/"
            if kind == "f" and not ctx.tree.is_file(k) or kind == "d" and not ctx.tree.is_dir(k):
                continue
            if name and not (
                fnmatch.fnmatchcase(base.casefold(), name[0].casefold())
                if name[1]
                else fnmatch.fnmatchcase(base, name[0])
            ):
                continue
            out.append(shown)
    return _join(out), 0


def c_mkdir(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    opts, paths = _opts(args, "p")
    if not paths:
        raise ShellError("missing operand", 2)
    for a in paths:
        p = ctx.path(a)
        if opts.get("p"):
            parts = p.strip("/").split("/")
            for j in range(1, len(parts) + 1):
                q = "/" + "/".join(parts[:j])
                if ctx.tree.is_file(q):
                    raise ShellError(f"cannot create directory '{a}': Not a directory")
                if not ctx.tree.exists(q):
                    ctx.tree.mkdir(q)
        else:
            ctx.tree.mkdir(p)
    return "", 0


def c_touch(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    if not args:
        raise ShellError("missing file operand", 2)
    for a in args:
        p = ctx.path(a)
        if not ctx.tree.exists(p):
            ctx.tree.write(p, "")
    return "", 0


def _dest(ctx: _Ctx, src: str, dst: str) -> str:
    d = ctx.path(dst)
    return posixpath.join(d, posixpath.basename(src)) if ctx.tree.is_dir(d) else d


def c_cp(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    opts, paths = _opts(args, "r")
    if len(paths) < 2:
        raise ShellError("missing destination file operand", 2)
    for s in paths[:-1]:
        sp = ctx.path(s)
        dst = _dest(ctx, sp, paths[-1])
        if ctx.tree.is_dir(sp):
            if not opts.get("r"):
                raise ShellError(f"-r not specified; omitting directory '{s}'")
            if dst == sp or dst.startswith(sp.rstrip("/") + "/"):
                raise ShellError(f"cannot copy a directory, '{s}', into itself")
            ctx.tree.mkdir(dst)
            for k in ctx.tree.descendants(sp):
                target = dst + k[len(sp) :]
                if ctx.tree.is_dir(k):
                    ctx.tree.mkdir(target)
                else:
                    ctx.tree.write(target, ctx.tree.read(k))
        else:
            ctx.tree.write(dst, ctx.tree.read(sp))
    return "", 0


def c_mv(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    _, paths = _opts(args, "f")
    if len(paths) < 2:
        raise ShellError("missing destination file operand", 2)
    for s in paths[:-1]:
        sp = ctx.path(s)
        if not ctx.tree.exists(sp) or sp == "/":
            raise ShellError(f"cannot stat '{s}': No such file or directory")
        dst = _dest(ctx, sp, paths[-1])
        if dst == sp:
            continue
        if dst.startswith(sp.rstrip("/") + "/"):
            raise ShellError(f"cannot move '{s}' to a subdirectory of itself")
        if ctx.tree.is_dir(sp):
            ctx.tree.mkdir(dst)
            for k in ctx.tree.descendants(sp):
                (
                    ctx.tree.mkdir
                    if ctx.tree.is_dir(k)
                    else lambda t, k=k: ctx.tree.write(t, ctx.tree.read(k))
                )(dst + k[len(sp) :])
            for k in reversed(ctx.tree.descendants(sp)):
                ctx.tree.remove(k)
        else:
            ctx.tree.write(dst, ctx.tree.read(sp))
        ctx.tree.remove(sp)
    return "", 0


def c_rm(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    opts, paths = _opts(args, "rfR")
    if not paths:
        raise ShellError("missing operand", 2)
    code = 0
    for a in paths:
        p = ctx.path(a)
        if p == "/":
            raise ShellError("it is dangerous to operate recursively on '/'")
        if not ctx.tree.exists(p):
            if not opts.get("f"):
                ctx.stderr.append(f"rm: cannot remove '{a}': No such file or directory\n")
                code = 1
            continue
        if ctx.tree.is_dir(p):
            if not (opts.get("r") or opts.get("R")):
                raise ShellError(f"cannot remove '{a}': Is a directory")
            for k in reversed(ctx.tree.descendants(p)):
                ctx.tree.remove(k)
        ctx.tree.remove(p)
    return "", code


def c_true(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    return "", 0


def c_false(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    return "", 1


# ---- data files ------------------------------------------------------------------------------
def _read_csv(text: str) -> tuple[list[str], list[dict[str, str]]]:
    rows = list(csv.DictReader(io.StringIO(text)))
    header = next(csv.reader(io.StringIO(text)), [])
    return header, rows


def _write_csv(header: list[str], rows: list[dict[str, str]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=header, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def c_csv(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    """csv cols [F] | csv select C1,C2 [F] | csv where COL=VALUE [F] | csv join COL A B | csv tojson [F]"""
    usage = "usage: csv cols [FILE] | select COLS [FILE] | where COL=VALUE [FILE] | join COL LEFT RIGHT | tojson [FILE]"
    if not args:
        raise ShellError(usage, 2)
    sub, rest = args[0], args[1:]

    def src(files: list[str]) -> str:
        return _inputs(ctx, files, stdin)[0][1]

    if sub == "cols":
        header, _ = _read_csv(src(rest))
        return _join(header), 0
    if sub == "select" and rest:
        cols = rest[0].split(",")
        header, rows = _read_csv(src(rest[1:]))
        missing = [c for c in cols if c not in header]
        if missing:
            raise ShellError(f"no column {missing[0]!r} (columns: {', '.join(header)})")
        return _write_csv(cols, rows), 0
    if sub == "where" and rest and "=" in rest[0]:
        col, val = rest[0].split("=", 1)
        header, rows = _read_csv(src(rest[1:]))
        if col not in header:
            raise ShellError(f"no column {col!r} (columns: {', '.join(header)})")
        return _write_csv(header, [r for r in rows if (r.get(col) or "").casefold() == val.casefold()]), 0
    if sub == "join" and len(rest) == 3:
        col, a, b = rest
        ha, ra = _read_csv(ctx.tree.read(ctx.path(a)))
        hb, rb = _read_csv(ctx.tree.read(ctx.path(b)))
        if col not in ha or col not in hb:
            raise ShellError(f"column {col!r} must be in both files")
        index: dict[str, list[dict[str, str]]] = {}
        for r in rb:
            index.setdefault((r.get(col) or "").casefold(), []).append(r)
        header = ha + [h for h in hb if h not in ha]
        rows = [
            {**r, **{k: v for k, v in m.items() if k not in ha}}
            for r in ra
            for m in index.get((r.get(col) or "").casefold(), [])
        ]
        return _write_csv(header, rows), 0
    if sub == "tojson":
        _, rows = _read_csv(src(rest))
        return json.dumps(rows, ensure_ascii=False, indent=1) + "\n", 0
    raise ShellError(usage, 2)


def c_jq(ctx: _Ctx, args: list[str], stdin: str | None) -> tuple[str, int]:
    """jq [-r] FILTER [FILE]: `.`, `.a.b`, `.[0]`, `.[]`, `.a[]`, `| keys`, `| length`, `.[] | .a`."""
    opts, rest = _opts(args, "rc")
    if not rest:
        raise ShellError("usage: jq [-r] FILTER [FILE]", 2)
    text = _inputs(ctx, rest[1:], stdin)[0][1]
    try:
        values = [json.loads(text)]
    except json.JSONDecodeError as e:
        raise ShellError(f"input is not JSON: {e}", 2) from None
    for stage in rest[0].split("|"):
        stage = stage.strip()
        nxt = []
        for v in values:
            nxt.extend(_jq_stage(stage, v))
        values = nxt
    out = []
    for v in values:
        if opts.get("r") and isinstance(v, str):
            out.append(v)
        else:
            out.append(json.dumps(v, ensure_ascii=False, indent=None if opts.get("c") else 2))
    return _join(out), 0


def _jq_stage(stage: str, v: object) -> list[object]:
    if stage in ("keys", "keys_unsorted"):
        if not isinstance(v, dict):
            raise ShellError("keys needs an object", 5)
        return [sorted(v) if stage == "keys" else list(v)]
    if stage == "length":
        return [len(v) if isinstance(v, dict | list | str) else 0]
    if not stage.startswith("."):
        raise ShellError(f"unsupported filter '{stage}'", 3)
    vals = [v]
    for tok in re.findall(r"\.[A-Za-z_][\w-]*|\[\d*\]|\.\[\d*\]|\.$", stage):
        tok = tok.lstrip(".")
        nxt: list[object] = []
        for x in vals:
            if tok == "":
                nxt.append(x)
            elif tok == "[]":
                if isinstance(x, list):
                    nxt.extend(x)
                elif isinstance(x, dict):
                    nxt.extend(x.values())
                else:
                    raise ShellError("cannot iterate over a scalar", 5)
            elif tok.startswith("["):
                idx = int(tok[1:-1])
                nxt.append(x[idx] if isinstance(x, list) and -len(x) <= idx < len(x) else None)
            else:
                nxt.append(x.get(tok) if isinstance(x, dict) else None)
        vals = nxt
    return vals


COMMANDS: dict[str, Callable[[_Ctx, list[str], str | None], tuple[str, int]]] = {
    "echo": c_echo,
    "pwd": c_pwd,
    "cd": c_cd,
    "ls": c_ls,
    "cat": c_cat,
    "head": c_head,
    "tail": c_tail,
    "grep": c_grep,
    "wc": c_wc,
    "sort": c_sort,
    "uniq": c_uniq,
    "cut": c_cut,
    "find": c_find,
    "mkdir": c_mkdir,
    "touch": c_touch,
    "cp": c_cp,
    "mv": c_mv,
    "rm": c_rm,
    "true": c_true,
    "false": c_false,
    "csv": c_csv,
    "jq": c_jq,
}

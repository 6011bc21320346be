"""Workspace: the persona's local files, reached through a `shell` tool (the CLI interface).

The tree lives in state, so it is snapshotted, hashed and replayed with everything else; the shell
(`compoworld.interfaces.shell`) interprets a documented POSIX-like subset and never touches the host.
"""

from __future__ import annotations

import csv
import io
import json
import posixpath
from typing import Any

from compoworld.core.envelope import InvalidArguments, RuleViolation
from compoworld.core.resource import Resource
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool
from compoworld.interfaces.shell import (
    MAX_TREE_BYTES,
    FileTree,
    QuotaExceeded,
    entry_bytes,
    lex_words,
    reads_only,
    run,
)
from compoworld.services.workspace.state import Entry

HOME = "/home/user"
MAX_COMMAND = 8192


class WorkspaceService(Service):
    """Local files in a virtual tree, used through a POSIX-like shell (ls, cat, grep, csv, jq, ...)."""

    name = "workspace"
    domain = "files"

    entries = Resource("entries", Entry, label="path")

    # Byte budget of the whole tree (paths + contents). A call that would pass it fails with a 422
    # and changes nothing. A server lowers it to its per-session state budget.
    quota_bytes: int | None = MAX_TREE_BYTES

    def tree_bytes(self) -> int:
        """Bytes the tree holds now. Records are values (replaced, never edited), so each one's size
        is cached by identity: a call costs what changed since the last one, not what the tree holds."""
        cache: dict[str, tuple[Any, int]] = self.__dict__.setdefault("_sizes", {})
        table = self.table("entries")
        if len(cache) > 2 * len(table) + 64:
            for k in [k for k in cache if k not in table]:
                del cache[k]
        total = 0
        for k, r in table.items():
            hit = cache.get(k)
            if hit is None or hit[0] is not r:
                hit = cache[k] = (r, entry_bytes(k, r["content"] if r["kind"] == "file" else None))
            total += hit[1]
        return total

    size_bytes = tree_bytes  # what a server's state budget reads from services that can amplify

    # ---- helpers used by seeds, skills and moves ------------------------------------------
    def write_file(self, path: str, text: str) -> None:
        path = posixpath.normpath("/" + path.lstrip("/"))
        parts = path.strip("/").split("/")
        for j in range(1, len(parts)):
            d = "/" + "/".join(parts[:j])
            if d not in self.table("entries"):
                self.store.put(
                    "entries", d, {"id": d, "kind": "dir", "content": None, "modified_at": self.clock.iso()}
                )
        self.store.put(
            "entries", path, {"id": path, "kind": "file", "content": text, "modified_at": self.clock.iso()}
        )

    def read_file(self, path: str) -> str | None:
        rec = self.table("entries").get(path)
        return rec["content"] if rec and rec["kind"] == "file" else None

    def seed_data(self, ctx: SeedContext) -> None:
        for d in ("Documents", "Downloads", "Desktop"):
            self.write_file(f"{HOME}/{d}/.keep", "")
        company = ctx.company
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["customer_id", "name", "tier", "industry"])
        for c in company.customers:
            w.writerow([c.id, c.name, c.tier, c.industry])
        self.write_file(f"{HOME}/Documents/customers.csv", buf.getvalue())
        products = [{"sku": p.sku, "name": p.name, "price": p.price} for p in company.products]
        self.write_file(f"{HOME}/Documents/products.json", json.dumps(products, indent=1) + "\n")
        self.write_file(f"{HOME}/notes.txt", f"Notes of {company.me.name}\n- check the inbox every morning\n")

    def inert(self, tool: str, arguments: dict[str, Any]) -> bool:
        """A shell line of reads only (`interfaces.shell.reads_only`) writes nothing."""
        command = arguments.get("command")
        return tool == "shell" and isinstance(command, str) and reads_only(command)

    # ---- the tool -------------------------------------------------------------------------
    @tool(mutates=True)
    def shell(self, command: str, cwd: str = HOME) -> dict:
        """Run a command line in the local workspace (a POSIX-like shell over virtual files).

        Commands: ls, cat, head, tail, grep (-i -n -r -c -v -l), wc, sort, uniq, cut, find, mkdir,
        touch, cp, mv, rm, echo, pwd, cd, csv (cols, select, where, join, tojson) and jq. Pipes,
        ;, &&, ||, > / >> / < and quotes work. Unknown commands exit 127.

        Args:
            command: The command line, e.g. "grep -i acme Documents/*.csv | wc -l".
            cwd: Directory to start in (default the home directory).
        """
        if len(command) > MAX_COMMAND:
            raise InvalidArguments(f"command is longer than {MAX_COMMAND} characters")
        start = posixpath.normpath("/" + cwd.lstrip("/"))
        table = self.table("entries")
        if start != "/" and (start not in table or table[start]["kind"] != "dir"):
            raise InvalidArguments(f"cwd '{cwd}' is not a directory of the workspace")
        entries = {k: (r["content"] if r["kind"] == "file" else None) for k, r in table.items()}
        now = self.clock.iso()

        def write(p: str, text: str | None) -> None:
            kind = "dir" if text is None else "file"
            self.store.put("entries", p, {"id": p, "kind": kind, "content": text, "modified_at": now})

        def delete(p: str) -> None:
            self.store.delete("entries", p)

        tree = FileTree(entries, write, delete, used=self.tree_bytes(), quota=self.quota_bytes)
        try:
            r = run(tree, _expand_globs(tree, command, start), start)
        except QuotaExceeded as e:
            raise RuleViolation(str(e), type="quota_exceeded") from None
        return {
            "stdout": r.stdout,
            "stderr": r.stderr,
            "exit_code": r.exit_code,
            "cwd": r.cwd,
            "truncated": r.truncated,
        }


def _glob(tree: FileTree, path: str) -> list[str]:
    """The paths of the tree an absolute pattern names, a component at a time (`*/*.csv`), sorted;
    hidden names only where the pattern asks for a dot."""
    import fnmatch

    found = ["/"]
    for part in [x for x in path.split("/") if x]:
        if "*" not in part and "?" not in part:
            found = [posixpath.join(f, part) for f in found if tree.exists(posixpath.join(f, part))]
            continue
        found = [
            k
            for f in found
            if tree.is_dir(f) or f == "/"
            for k in tree.children(f)
            if fnmatch.fnmatchcase(posixpath.basename(k), part)
            and (part.startswith(".") or not posixpath.basename(k).startswith("."))
        ]
    return sorted(found)


def _expand_globs(tree: FileTree, command: str, cwd: str) -> str:
    """Expand unquoted `*`/`?` words against the virtual tree, as a shell would (no match: left as is),
    each in the directory the line is in by then: a `cd` earlier in the line moves it (from play:
    `cd Documents/security; wc -l *` counted the home directory's names)."""
    import shlex

    out = []
    words = lex_words(command, False)
    if isinstance(words, str):  # the lexer's complaint: the shell reports it
        return command
    head, after_cd = True, False
    for w in words:
        if after_cd:  # the directory a `cd` goes to, where the tree has it (else the shell stays)
            after_cd = False
            if w not in (";", "&&", "||", "|"):
                to = posixpath.normpath(posixpath.join(cwd, w.strip("'\"")))
                if tree.is_dir(to) or to == "/":
                    cwd = to
        elif head and w == "cd":
            after_cd = True
        head = w in (";", "&&", "||", "|")
        if ("*" in w or "?" in w) and not w.startswith(("'", '"')):
            hits = _glob(tree, posixpath.normpath(posixpath.join(cwd, w)))
            if hits:
                rel = [h if w.startswith("/") else posixpath.relpath(h, cwd) for h in hits]
                out.extend(shlex.quote(h) for h in rel)
                continue
        out.append(w)
    return " ".join(out)

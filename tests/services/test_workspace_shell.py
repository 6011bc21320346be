"""The workspace service's shell: the command subset, pipes, redirection, errors and containment."""

from __future__ import annotations

import pytest

from compoworld.core.environment import Environment


@pytest.fixture
def sh():
    env = Environment(["workspace"], seed=3, size="small")

    def run(command: str, **kw):
        r = env.call("workspace__shell", {"command": command, **kw})
        assert r["success"], r
        return r["data"]

    run.env = env
    return run


def out(sh, command: str, **kw) -> str:
    d = sh(command, **kw)
    assert d["exit_code"] == 0, d
    return d["stdout"]


def test_files_and_directories(sh) -> None:
    out(sh, "mkdir -p work/a/b && touch work/a/b/x.txt && echo hello > work/a/y.txt")
    assert out(sh, "ls work/a") == "b/\ny.txt\n"
    # -R lists each subdirectory under its own header, depth first (it was accepted and ignored)
    assert out(sh, "ls -R work") == "work:\na/\n\nwork/a:\nb/\ny.txt\n\nwork/a/b:\nx.txt\n"
    assert out(sh, "find work -type f") == "work/a/b/x.txt\nwork/a/y.txt\n"
    assert out(sh, "find work -name '*.txt' -type f | wc -l") == "2\n"
    out(sh, "cp work/a/y.txt work/z.txt && mv work/z.txt work/w.txt && cat work/w.txt")
    assert out(sh, "cat work/w.txt") == "hello\n"
    out(sh, "cp -r work/a work/copy")
    assert out(sh, "find work/copy") == "work/copy\nwork/copy/b\nwork/copy/b/x.txt\nwork/copy/y.txt\n"
    out(sh, "rm -r work/copy && rm work/w.txt")
    assert out(sh, "ls work") == "a/\n"
    assert sh("rm work/a")["exit_code"] == 1 and "Is a directory" in sh("rm work/a")["stderr"]
    assert out(sh, "cd work/a; pwd") == "/home/user/work/a\n"
    assert out(sh, "pwd", cwd="/home/user/work") == "/home/user/work\n"


def test_text_tools_pipes_and_redirection(sh) -> None:
    out(sh, "echo 'b,2' > t.csv; echo 'a,1' >> t.csv; echo 'b,2' >> t.csv; echo \"c,10\" >> t.csv")
    assert out(sh, "cat t.csv | sort | uniq -c") == "      1 a,1\n      2 b,2\n      1 c,10\n"
    assert out(sh, "sort -t , -k 2 -n t.csv | head -1") == "a,1\n"
    assert out(sh, "sort -r t.csv | uniq") == "c,10\nb,2\na,1\n"
    assert out(sh, "cut -d , -f 2 t.csv | sort -n | tail -n 1") == "10\n"
    assert out(sh, "grep -n b t.csv") == "1:b,2\n3:b,2\n"
    assert out(sh, "grep -c B -i t.csv") == "2\n"
    assert out(sh, "grep -v b t.csv | wc -l") == "2\n"
    assert sh("grep zzz t.csv")["exit_code"] == 1
    assert out(sh, "grep -r -l ',10' .") == "./t.csv\n"
    # every -e is a pattern: a line matching any of them is printed (the last one alone was kept)
    assert out(sh, "grep -e ',10' -e '^a' t.csv") == out(sh, "grep -E ',10|^a' t.csv")
    assert out(sh, "grep -c -e ',10' -e '^a' t.csv") == "2\n"
    assert out(sh, "grep -e ',1' t.csv") == "a,1\nc,10\n"  # one -e alone is that pattern
    assert out(sh, "wc -l < t.csv") == "4\n"
    assert out(sh, "head -2 t.csv") == "b,2\na,1\n" and out(sh, "tail -n 1 t.csv") == "c,10\n"
    assert out(sh, "false || echo recovered") == "recovered\n"
    assert out(sh, "false && echo never; echo after") == "after\n"
    assert out(sh, "echo 'a | b ; c > d'") == "a | b ; c > d\n"  # quoted operators are text


def test_a_glob_expands_in_the_directory_a_cd_earlier_in_the_line_moved_to(sh) -> None:
    """From play: `cd Documents/security; wc -l *` counted the names of the home directory."""
    out(sh, "mkdir -p work/logs && touch work/logs/a.csv work/logs/b.csv work/top.txt")
    assert out(sh, "cd work/logs; echo *") == "a.csv b.csv\n"
    assert out(sh, "cd work && cd logs && echo *.csv") == "a.csv b.csv\n"
    assert out(sh, "cd work; echo */*.csv") == "logs/a.csv logs/b.csv\n"
    assert out(sh, "echo work/*") == "work/logs work/top.txt\n"
    # a cd that fails leaves the shell where it was, as the glob does
    assert sh("cd nowhere; echo work/*.txt")["stdout"] == "work/top.txt\n"
    assert out(sh, "cd work/logs; echo '*'") == "*\n"  # quoted: no expansion


def test_csv_and_jq_merge_two_data_files(sh) -> None:
    out(sh, "echo 'id,name' > people.csv && echo 'p1,Ada' >> people.csv && echo 'p2,Lin' >> people.csv")
    out(sh, "echo 'id,total' > orders.csv && echo 'p2,40' >> orders.csv && echo 'p1,15' >> orders.csv")
    merged = out(sh, "csv join id people.csv orders.csv")
    assert merged == "id,name,total\np1,Ada,15\np2,Lin,40\n"
    assert (
        out(sh, "csv join id people.csv orders.csv | csv where name=lin | csv select total") == "total\n40\n"
    )
    assert out(sh, "csv tojson people.csv | jq -r '.[1].name'") == "Lin\n"
    assert out(sh, "csv tojson orders.csv | jq -r '.[] | .total'") == "40\n15\n"
    assert out(sh, "cat Documents/products.json | jq length") != "0\n"
    assert sh("csv select nope people.csv")["exit_code"] == 1
    assert sh("echo '{bad' | jq .")["exit_code"] == 2


def test_errors_unknown_commands_and_usage(sh) -> None:
    d = sh("frobnicate --all")
    assert d["exit_code"] == 127 and "command not found" in d["stderr"]
    assert sh("cat nope.txt")["exit_code"] == 1
    assert sh("grep -Z x notes.txt")["exit_code"] == 2
    assert sh("echo 'unterminated")["exit_code"] == 2
    assert sh("ls | ")["exit_code"] == 2
    assert sh("mkdir notes.txt")["exit_code"] == 1
    r = sh.env.call("workspace__shell", {"command": "ls", "cwd": "/etc"})
    assert not r["success"] and r["error"]["code"] == 400


@pytest.mark.parametrize(
    "command",
    [
        "cat ../../../../etc/passwd",
        "cat /etc/passwd",
        "ls /proc/self",
        "cat /proc/self/environ",
        "cd ../../../..; ls; cat etc/shadow",
        "ln -s /etc/passwd p; cat p",
        ":(){ :|:& };:",
        "sleep 100 &",
        "$(cat /etc/passwd)",
        "python -c 'import os'",
    ],
)
def test_escape_attempts_fail_or_are_contained(sh, command: str) -> None:
    before = sh.env.state_hash()
    d = sh(command)
    assert d["exit_code"] != 0 and d["stderr"], d  # a clear error, never host data
    assert "root:" not in d["stdout"] and "PATH=" not in d["stdout"]
    assert sh.env.state_hash() == before


def test_huge_outputs_and_files_are_bounded(sh) -> None:
    out(sh, "echo " + "x" * 4000 + " > big.txt")
    for _ in range(7):  # doubling: 4 KB -> 512 KB
        out(sh, "cat big.txt big.txt > big2.txt && mv big2.txt big.txt")
    d = sh("cat big.txt big.txt big.txt")
    assert d["truncated"] and len(d["stdout"].encode()) <= 256 * 1024
    d = sh("cat big.txt big.txt big.txt > huge.txt")
    assert d["exit_code"] != 0 and "too large" in d["stderr"]
    long = " ; ".join(["true"] * 100)
    assert sh(long)["exit_code"] == 2


def test_shell_state_is_deterministic_and_snapshotted(sh) -> None:
    env = sh.env
    out(sh, "mkdir d && echo one > d/f.txt")
    h = env.state_hash()
    other = Environment(["workspace"], seed=3, size="small")
    other.call("workspace__shell", {"command": "mkdir d && echo one > d/f.txt"})
    assert other.state_hash() == h
    snap = env.snapshot()
    out(sh, "rm -r d")
    env.restore(snap)
    assert out(sh, "cat d/f.txt") == "one\n"


def test_workspace_joins_verified_tasks_through_the_shell() -> None:
    from compoworld.tasks.gates import run_gates
    from compoworld.tasks.generator import Settings
    from compoworld.tasks.pipeline import generate

    tasks, _ = generate(
        4, seed=12, settings=Settings(k=3, distractors=1, pool=("workspace", "email", "chat"))
    )
    assert all("workspace" in t.services for t in tasks)
    shell_calls = [c for t in tasks for c in t.reference_solution if c.tool == "workspace__shell"]
    assert shell_calls and any(c.arguments["command"].startswith("grep") for c in shell_calls)
    for t in tasks:
        assert all(v is None for v in run_gates(t).values())

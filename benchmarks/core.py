"""Core engine costs on a 5-service environment with default data.

Prints each figure beside a baseline measured in the same run:
- a tool call vs a bare Python method call of the same tool (the difference is the engine's overhead);
- restore vs `copy.deepcopy` of the same state;
- snapshot vs `copy.deepcopy`;
- `state_hash` vs sorted `json.dumps` + sha256 of the whole state (what a naive engine does).
Targets (issue 2): median call overhead < 30 µs, restore < 2 ms, hash < 2 ms.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median_us, report  # noqa: E402
from compoworld.core.environment import Environment  # noqa: E402
from compoworld.services import registry  # noqa: E402

PREFERRED = ["email", "chat", "calendar", "crm", "helpdesk"]


def main() -> None:
    names = [n for n in PREFERRED if n in registry()]
    names += [n for n in registry() if n not in names][: 5 - len(names)]
    if "--all" in sys.argv:
        names = list(registry())
    env = Environment(services=names, seed=0)
    size = len(json.dumps(env.snapshot()))
    records = sum(len(t) for s in env.services.values() for t in s.store.tables.values())
    print(f"environment: {', '.join(names)} | {records} records | {size / 1e6:.2f} MB of JSON state")
    email = env.services["email"]
    mid = next(iter(email.table("messages")))
    read_args = {"messageId": mid}
    spec_read = email.tool_specs["gmail_read_email"]
    spec_write = email.tool_specs["gmail_modify_email"]
    s0 = env.snapshot()

    read = median_us(lambda: env.call("email__gmail_read_email", read_args))
    bare_read = median_us(lambda: spec_read.fn(email, **read_args))

    flip = [{"messageId": mid, "addLabelIds": ["STARRED"]}, {"messageId": mid, "removeLabelIds": ["STARRED"]}]
    i = [0]

    def write() -> None:
        i[0] ^= 1
        env.call("email__gmail_modify_email", flip[i[0]])

    def bare_write() -> None:
        i[0] ^= 1
        spec_write.fn(email, **{"addLabelIds": None, "removeLabelIds": None, **flip[i[0]]})
        email.store.commit()

    w = median_us(write)
    bare_w = median_us(bare_write)

    def dirty() -> None:  # one episode step: a write since the last snapshot
        write()

    snap = median_us(env.snapshot, 500, setup=dirty)
    deep = median_us(lambda: copy.deepcopy(s0), 20)
    restore = median_us(lambda: env.restore(s0), 500, setup=dirty)
    h = median_us(env.state_hash, 500, setup=dirty)
    naive_hash = median_us(
        lambda: hashlib.sha256(json.dumps(env.snapshot(), sort_keys=True).encode()).hexdigest(), 20
    )

    def cold() -> None:  # no cache at all: every table must be hashed
        for svc in env.services.values():
            svc.store._hash.clear()
            svc.store._base_hash.clear()

    h_cold = median_us(env.state_hash, 50, setup=cold)
    report(
        [
            (
                "read call (gmail_read_email)",
                read,
                "bare method call",
                bare_read,
                f"overhead {read - bare_read:.1f}µs < 30µs",
            ),
            (
                "write call (gmail_modify_email)",
                w,
                "bare method call + commit",
                bare_w,
                f"overhead {w - bare_w:.1f}µs < 30µs",
            ),
            ("snapshot after a write", snap, "copy.deepcopy(state)", deep, "-"),
            ("restore(s0) after a write", restore, "copy.deepcopy(state)", deep, "< 2000µs"),
            ("state_hash after a write", h, "json.dumps(sort_keys)+sha256", naive_hash, "< 2000µs"),
            ("state_hash, cold (no cache)", h_cold, "json.dumps(sort_keys)+sha256", naive_hash, "-"),
        ]
    )
    ok = read - bare_read < 30 and w - bare_w < 30 and restore < 2000 and h < 2000
    print("targets met" if ok else "TARGETS MISSED")


if __name__ == "__main__":
    main()

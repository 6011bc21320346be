"""Core engine costs, each printed beside a baseline measured in the same run.

1. A 5-service environment with default data:
   - a read call and a write call vs a bare Python method call of the same tool (the difference is
     the engine's overhead; target: write overhead <= 8 µs);
   - the read with a thread lookup (gmail_read_email) vs the same read scanning the table for the
     thread (target: the lookup <= 5 µs);
   - snapshot and restore vs `copy.deepcopy`; `state_hash` vs sorted `json.dumps` + sha256.
2. Every library service at 0.3, 1.5 and 10 MB of state (small, default, large padded with mail):
   - the hash after 10 writes vs rehashing the written tables whole (hash version 1); target: flat
     within 2x across sizes and <= 50 µs at 10 MB;
   - restore after 10 writes vs copying every table (a restore that visits everything); target:
     <= 30 µs at 1.5 MB.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median_us, report  # noqa: E402
from compoworld.core.environment import Environment  # noqa: E402
from compoworld.core.state import HASH_VERSION, hash_value  # noqa: E402
from compoworld.services import registry  # noqa: E402

PREFERRED = ["email", "chat", "calendar", "crm", "helpdesk"]


def five_services() -> list[tuple[str, float, str, float, str]]:
    names = [n for n in PREFERRED if n in registry()]
    names += [n for n in registry() if n not in names][: 5 - len(names)]
    env = Environment(services=names, seed=0)
    size = len(json.dumps(env.snapshot()))
    records = sum(len(t) for s in env.services.values() for t in s.store.tables.values())
    print(f"environment: {', '.join(names)} | {records} records | {size / 1e6:.2f} MB of JSON state")
    email = env.services["email"]
    msgs = email.table("messages")
    mid = max(msgs, key=lambda k: len(email.store.lookup("messages", "threadId", msgs[k]["threadId"])))
    tid = msgs[mid]["threadId"]
    read_args = {"messageId": mid}
    spec_read = email.tool_specs["gmail_read_email"]
    spec_write = email.tool_specs["gmail_modify_email"]
    s0 = env.snapshot()

    read = median_us(lambda: env.call("email__gmail_read_email", read_args))
    bare_read = median_us(lambda: spec_read.fn(email, **read_args))
    lookup = median_us(lambda: email.store.lookup("messages", "threadId", tid))
    scan = median_us(lambda: [m for m in email.table("messages").values() if m["threadId"] == tid])

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

    # a typed write (Resource.update): validating only the changed fields vs the whole record
    desk = env.services["helpdesk"]
    tid = next(iter(desk.table("tickets").values()))["id"]
    prio = [{"ticket_id": tid, "priority": 3}, {"ticket_id": tid, "priority": 2}]

    def typed_write() -> None:
        i[0] ^= 1
        env.call("helpdesk__freshdesk_update_ticket", prio[i[0]])

    typed_write()
    typed_write()  # the record is now one the store knows it validated
    tw = median_us(typed_write)
    spec_typed = desk.tool_specs["freshdesk_update_ticket"]
    none = dict.fromkeys(("subject", "description", "status", "tags", "custom_fields"))

    def bare_typed() -> None:
        i[0] ^= 1
        spec_typed.fn(desk, **none, **prio[i[0]])
        desk.store.commit()

    bare_tw = median_us(bare_typed)

    def full_validation() -> None:
        i[0] ^= 1
        cur = desk.table("tickets")[str(tid)]
        desk.tickets.validate({**cur, "priority": prio[i[0]]["priority"], "updated_at": env.clock.iso()})

    fv = median_us(full_validation)
    known = desk.__dict__["_validated"]

    def lean_validation() -> None:
        i[0] ^= 1
        cur = desk.table("tickets")[str(tid)]
        known[id(cur)] = cur
        desk.tickets._validate_changes(
            cur, {"priority": prio[i[0]]["priority"], "updated_at": env.clock.iso()}
        )

    lv = median_us(lean_validation)
    snap = median_us(env.snapshot, 500, setup=write)
    deep = median_us(lambda: copy.deepcopy(s0), 20)
    restore = median_us(lambda: env.restore(s0), 500, setup=write)
    h = median_us(env.state_hash, 500, setup=write)
    naive_hash = median_us(
        lambda: hashlib.sha256(json.dumps(env.snapshot(), sort_keys=True).encode()).hexdigest(), 20
    )

    def cold() -> None:  # no cache at all: every record must be digested
        env.restore(json.loads(json.dumps(s0)))

    h_cold = median_us(env.state_hash, 30, setup=cold)
    env.restore(s0)
    return [
        (
            "read call (gmail_read_email)",
            read,
            "bare method call",
            bare_read,
            f"overhead {read - bare_read:.1f}µs",
        ),
        ("thread lookup (store index)", lookup, "scan of the messages table", scan, "<= 5µs"),
        (
            "write call (gmail_modify_email)",
            w,
            "bare method call + commit",
            bare_w,
            f"overhead {w - bare_w:.1f}µs <= 8µs",
        ),
        (
            "typed write (freshdesk_update_ticket)",
            tw,
            "bare method call + commit",
            bare_tw,
            f"overhead {tw - bare_tw:.1f}µs <= 8µs",
        ),
        ("  validate changed fields only", lv, "validate + dump whole record", fv, "-"),
        ("snapshot after a write", snap, "copy.deepcopy(state)", deep, "-"),
        ("restore(s0) after a write", restore, "copy.deepcopy(state)", deep, "< 2000µs"),
        ("state_hash after a write", h, "json.dumps(sort_keys)+sha256", naive_hash, "< 2000µs"),
        ("state_hash, cold (new records)", h_cold, "json.dumps(sort_keys)+sha256", naive_hash, "-"),
    ], (max(w - bare_w, tw - bare_tw), lookup)


def sized_world(size: str, pad_to_mb: float = 0.0) -> Environment:
    env = Environment(services=list(registry()), seed=0, size=size)
    if pad_to_mb:
        email = env.services["email"]
        msgs = list(email.table("messages").values())
        mb = len(orjson.dumps(env.snapshot())) / 1e6
        per = len(orjson.dumps(msgs)) / len(msgs) / 1e6
        for n in range(int((pad_to_mb - mb) / per) + 1):
            m = msgs[n % len(msgs)]
            key = f"pad{n:06d}"
            email.store.put("messages", key, {**m, "id": key, "threadId": f"tpad{n // 3:06d}"})
        email.store.commit()
        env.initial = env.snapshot()
    return env


def by_size(
    label: str, size: str, pad: float
) -> tuple[list[tuple[str, float, str, float, str]], dict[str, float]]:
    env = sized_world(size, pad)
    mb = len(orjson.dumps(env.snapshot())) / 1e6
    s0 = env.initial
    email = env.services["email"]
    ids = list(email.table("messages"))[:10]
    env.state_hash()
    flip = [0]

    def ten_writes() -> None:
        flip[0] ^= 1
        key = "addLabelIds" if flip[0] else "removeLabelIds"
        for mid in ids:
            env.call("email__gmail_modify_email", {"messageId": mid, key: ["STARRED"]})

    h = median_us(env.state_hash, 300, setup=ten_writes)

    def v1_hash() -> str:  # hash version 1: the written tables re-serialised and rehashed whole
        return hash_value({t: hash_value(email.store.tables[t]) for t in ("messages", "_meta")})

    base = median_us(v1_hash, 30, setup=ten_writes)
    figures = {label: h}
    rows = [
        (
            f"hash after 10 writes, {label} ({mb:.1f})",
            h,
            "rehash written tables (v1)",
            base,
            "flat, <= 50µs at 10 MB",
        )
    ]
    if label == "1.5 MB":

        def all_tables() -> None:  # a restore that visits and copies every table
            for svc in env.services.values():
                for src in s0["services"][svc.name].values():
                    if isinstance(src, dict):
                        dict(src)

        r = median_us(lambda: env.restore(s0), 300, setup=ten_writes)
        rb = median_us(all_tables, 30)
        figures["restore"] = r
        rows.append(("restore after 10 writes, 1.5 MB", r, "copy every table", rb, "<= 30µs"))
    env.restore(s0)
    return rows, figures


def hash_and_restore_by_size() -> tuple[list[tuple[str, float, str, float, str]], dict[str, float]]:
    rows: list[tuple[str, float, str, float, str]] = []
    figures: dict[str, float] = {}
    for label, size, pad in (("0.3 MB", "small", 0.0), ("1.5 MB", "default", 0.0), ("10 MB", "large", 10.0)):
        more, fig = by_size(label, size, pad)
        rows += more
        figures.update(fig)
    return rows, figures


def main() -> None:
    print(f"state hash version {HASH_VERSION}")
    rows, (overhead, lookup) = five_services()
    more, fig = hash_and_restore_by_size()
    report(rows + more)
    hashes = [fig["0.3 MB"], fig["1.5 MB"], fig["10 MB"]]
    checks = {
        "write overhead <= 8µs": overhead <= 8,
        "thread lookup <= 5µs": lookup <= 5,
        "hash flat within 2x across sizes": max(hashes) <= 2 * min(hashes),
        "hash <= 50µs at 10 MB": fig["10 MB"] <= 50,
        "restore <= 30µs at 1.5 MB": fig["restore"] <= 30,
    }
    for name, ok in checks.items():
        print(f"{'met   ' if ok else 'MISSED'} {name}")
    print("targets met" if all(checks.values()) else "TARGETS MISSED")


if __name__ == "__main__":
    main()

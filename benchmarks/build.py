"""Building a 10-service environment from a seed, against restoring the same state from a snapshot.

Prints the median build time, the median restore time of a JSON-loaded snapshot (every table
copied: a cold restore), the median copy-on-write reset after one write (what an RL loop pays),
and the ratios. A reset must cost what the episode changed, not what it costs to build the world.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median_us  # noqa: E402
from compoworld.core.environment import Environment  # noqa: E402
from compoworld.services import registry  # noqa: E402

SERVICES = ["email", "chat", "calendar", "crm", "helpdesk", "issues", "files", "sql", "payments", "shop"]


def main() -> None:
    names = [n for n in SERVICES if n in registry()][:10]
    registry()  # import every service once, outside the timings
    Environment(services=names, seed=0)  # warm caches of the shared company
    seeds = iter(range(1, 10_000))
    build = median_us(lambda: Environment(services=names, seed=next(seeds)), repeat=15)
    env = Environment(services=names, seed=0)
    frozen = json.dumps(env.snapshot())
    snap_loaded = [json.loads(frozen)]
    cold = median_us(
        lambda: env.restore(snap_loaded[0]),
        repeat=30,
        setup=lambda: snap_loaded.__setitem__(0, json.loads(frozen)),
    )
    s0 = env.snapshot()
    mid = next(iter(env.services["email"].table("messages")))
    flip = [0]

    def write() -> None:
        flip[0] ^= 1
        env.call(
            "email__gmail_modify_email",
            {"messageId": mid, "addLabelIds" if flip[0] else "removeLabelIds": ["STARRED"]},
        )

    warm = median_us(lambda: env.restore(s0), repeat=500, setup=write)
    ids = list(env.services["email"].table("messages"))[:10]

    def ten_writes() -> None:
        flip[0] ^= 1
        for m in ids:
            env.call(
                "email__gmail_modify_email",
                {"messageId": m, "addLabelIds" if flip[0] else "removeLabelIds": ["STARRED"]},
            )

    env.state_hash()
    reset10 = median_us(lambda: env.restore(s0), repeat=300, setup=ten_writes)
    hash10 = median_us(env.state_hash, repeat=300, setup=ten_writes)
    env.restore(s0)
    t = time.perf_counter()
    assert env.state_hash()
    print(
        f"services: {', '.join(names)}  ({sum(len(s.tool_specs) for s in env.services.values())} tools, "
        f"{len(frozen) / 1e6:.2f} MB of state)"
    )
    print(f"{'build from seed (median)':40} {build / 1000:10.2f} ms")
    print(
        f"{'cold restore of a loaded snapshot':40} {cold / 1000:10.2f} ms   build/restore = {build / cold:8.1f}x"
    )
    print(
        f"{'copy-on-write reset after one write':40} {warm:10.1f} µs   build/reset   = {build / warm:8.0f}x"
    )
    print(f"(first hash after reset: {(time.perf_counter() - t) * 1e3:.2f} ms)")
    print(
        f"{'reset after 10 writes':40} {reset10:10.1f} µs   build/reset   = {build / reset10:8.0f}x"
        f"   target <= 30 µs: {'met' if reset10 <= 30 else 'MISSED'}"
    )
    print(
        f"{'state hash after 10 writes':40} {hash10:10.1f} µs   build/hash    = {build / hash10:8.0f}x"
        f"   target <= 50 µs: {'met' if hash10 <= 50 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()

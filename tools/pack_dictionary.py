"""Build the preset dictionary that packed task lines are compressed with (`tasks.model.pack_line`).

A task line packs its bulky fields (s0's patch, rubric, reference, graph, traps, meta) into one
zlib stream. zlib's preset dictionary (`zdict`, at most 32 KiB) holds what most tasks repeat (keys,
predicate names, templates of policy pages and messages), so each line starts with it "already
seen". The dictionary is frozen once released: files name it (`z1:`), and a new one gets a new
name beside the old. Run from the repository root:

    python tools/pack_dictionary.py src/compoworld/tasks/pack_z1.zdict

It samples tasks from seeds no test or benchmark uses, counts in how many tasks each 24-byte piece
of packed JSON appears, keeps the runs of pieces most tasks share, and writes them most valuable
last (zlib finds nearer matches cheaper)."""

from __future__ import annotations

import sys
from collections import Counter

import orjson

from compoworld.tasks.generator import Rejected, Settings, generate_task
from compoworld.tasks.model import PACK_PLAIN, Task

K = 24
SIZE = 32 * 1024


def samples() -> list[bytes]:
    out = []
    for settings, seeds in (
        (Settings(k=5, difficulty="hard"), range(9000, 9004)),
        (Settings(k=4, difficulty="medium"), range(9100, 9102)),
        (Settings(k=3, difficulty="easy"), range(9200, 9202)),
        (Settings(), range(9300, 9302)),
    ):
        for seed in seeds:
            for index in range(6):
                try:
                    task = Task.model_validate(generate_task(seed, index, settings))
                except Rejected:
                    continue
                line = orjson.loads(task.to_line(pack=False))
                out.append(
                    orjson.dumps(
                        {k: v for k, v in line.items() if k not in PACK_PLAIN}, option=orjson.OPT_SORT_KEYS
                    )
                )
    return out


def build(blobs: list[bytes]) -> bytes:
    df: Counter[bytes] = Counter()
    for b in blobs:
        df.update({b[i : i + K] for i in range(0, len(b) - K + 1)})
    keep = max(2, len(blobs) // 4)  # a piece a quarter of the tasks share
    segments: Counter[bytes] = Counter()
    for b in blobs:
        i = 0
        while i <= len(b) - K:
            if df[b[i : i + K]] < keep:
                i += 1
                continue
            j = i
            while j <= len(b) - K and df[b[j : j + K]] >= keep:
                j += 1
            seg = b[i : j + K - 1]
            segments[seg] = max(segments[seg], min(df[b[x : x + K]] for x in range(i, j)))
            i = j + K - 1
    ranked = sorted(segments, key=lambda s: (segments[s] * len(s), s))  # most valuable last
    out = b""
    for seg in reversed(ranked):
        if seg in out:
            continue
        if len(out) + len(seg) > SIZE:
            break
        out = seg + out
    return out


if __name__ == "__main__":
    data = build(samples())
    with open(sys.argv[1], "wb") as f:
        f.write(data)
    print(f"{len(data)} bytes -> {sys.argv[1]}")

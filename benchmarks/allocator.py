"""Allocator speed: allocate+free pairs per second with 1k, 10k and 100k live blocks.

Two scenarios, each on a Wormhole DRAM bank manager's free list (1 GiB, 32 B alignment):
- packed: N live blocks side by side, pairs taken from the free space above them;
- fragmented: 2N blocks allocated, every other one freed (N live blocks, N holes of random
  sizes), pairs of random sizes that land in the lowest (highest) hole that fits.
Each figure is the best of REPEATS passes over the same 20k pairs.  The limit beside each figure
is a dict insert + delete of the same count, the floor of any bookkeeping in Python.  Prints a
table, then one JSON line.
"""

from __future__ import annotations

import json
import random
import time

from meshnn.device.allocator import FreeList

PAIRS = 20_000
REPEATS = 5  # passes over the same pairs; the best is reported
SIZES = [1 << k for k in range(5, 13)]  # 32 B .. 4 KiB per bank


def free_list() -> FreeList:
    return FreeList(size=1 << 30, offset=1_048_640, min_allocation_size=32, alignment=32)


def time_pairs(fl: FreeList, sizes: list[int], bottom_up: bool) -> float:
    """Seconds per pair, best of REPEATS passes (a pair leaves the free blocks as it found them,
    so every pass sees the same state; the best pass is the one least disturbed by the machine)."""
    passes = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for size in sizes:
            fl.free(fl.allocate(size, bottom_up=bottom_up))
        passes.append((time.perf_counter() - start) / len(sizes))
    return min(passes)


def dict_floor(count: int) -> float:
    table: dict[int, int] = {}
    passes = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for i in range(count):
            table[i] = i
            del table[i]
        passes.append((time.perf_counter() - start) / count)
    return min(passes)


def scenario(live: int, fragmented: bool, bottom_up: bool, rng: random.Random) -> float:
    fl = free_list()
    blocks = [fl.allocate(rng.choice(SIZES), bottom_up=bottom_up) for _ in range(2 * live if fragmented else live)]
    if fragmented:
        for address in blocks[::2]:
            fl.free(address)
    return time_pairs(fl, [rng.choice(SIZES) for _ in range(PAIRS)], bottom_up)


def main() -> None:
    rng = random.Random(7)
    floor = dict_floor(PAIRS)
    rows, results = [], {}
    for name, fragmented, bottom_up in [
        ("packed bottom-up", False, True),
        ("packed top-down", False, False),
        ("fragmented bottom-up", True, True),
        ("fragmented top-down", True, False),
    ]:
        per_live = {live: scenario(live, fragmented, bottom_up, rng) for live in (1_000, 10_000, 100_000)}
        ratio = per_live[100_000] / per_live[1_000]
        results[name] = {f"us_per_pair_{k}": round(v * 1e6, 3) for k, v in per_live.items()} | {
            "ratio_100k_1k": round(ratio, 2)
        }
        rows.append((name, per_live, ratio))
    print(f"{'scenario':22} {'1k live':>10} {'10k live':>10} {'100k live':>10} {'100k/1k':>8}  (us per pair)")
    for name, per_live, ratio in rows:
        cells = " ".join(f"{per_live[k] * 1e6:10.2f}" for k in (1_000, 10_000, 100_000))
        print(f"{name:22} {cells} {ratio:8.2f}")
    print(f"{'limit: dict insert+del':22} {floor * 1e6:10.3f}")
    print(
        json.dumps(
            {
                "benchmark": "allocator",
                "pairs": PAIRS,
                "best_of": REPEATS,
                "dict_floor_us": round(floor * 1e6, 3),
                **results,
            }
        )
    )


if __name__ == "__main__":
    main()

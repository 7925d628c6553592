"""ttnn-visualizer 0.108.0's Graph page, "Repeats" grouping, in Python: which runs of operations it
folds into one repeated block ("block x 2"), from what ``/api/operations`` serves.

Ported from the visualizer's op-graph builder (its ``static/assets/opGraphBuilder-*.js``): an op's
signature is its name, its inputs' shapes and its outputs' shapes; a block of ``length`` ops
repeats when the next ``length`` ops have the same signatures in the same order and the same edges
(each output's consumers, inside the block by position, outside it as "out"); blocks of 2 to 64
ops are tried, shortest first, and a found repeat is taken greedily.
"""

from __future__ import annotations

from typing import Any

MAX_LENGTH = 64


def _signatures(operations: list[dict[str, Any]]) -> list[int]:
    texts = []
    for op in operations:
        inputs = ",".join(str(t.get("shape")) for t in op["inputs"])
        outputs = ",".join(str(t.get("shape")) for t in op["outputs"])
        texts.append(f"{op['name']}|{inputs}|{outputs}")
    numbers: dict[str, int] = {}
    return [numbers.setdefault(text, len(numbers) + 1) for text in texts]


def _edges(operations: list[dict[str, Any]]) -> list[list[tuple[int, str]]]:
    index = {op["id"]: i for i, op in enumerate(operations)}
    return [
        [(index.get(consumer, -1), str(t.get("shape"))) for t in op["outputs"] for consumer in t.get("consumers", [])]
        for op in operations
    ]


def _block_edges(start: int, length: int, edges: list[list[tuple[int, str]]]) -> str:
    found = []
    for offset in range(length):
        for target, label in edges[start + offset]:
            inside = start <= target < start + length
            found.append(f"{offset}->{target - start if inside else 'out'}:{label}")
    return "|".join(sorted(found))


def repeats(operations: list[dict[str, Any]]) -> list[tuple[int, int, int]]:
    """``(first op id, ops in the block, times repeated)`` of each repeat the Graph page folds."""
    total = len(operations)
    if total < 4 or total > 10_000:
        return []
    sig, edges = _signatures(operations), _edges(operations)
    taken = [False] * total
    found = []

    def same(a: int, b: int, length: int) -> bool:
        return sig[a : a + length] == sig[b : b + length]

    for length in range(2, min(MAX_LENGTH, total // 2) + 1):
        start = 0
        while start <= total - 2 * length:
            second = start + length
            if taken[start] or sig[start] != sig[second] or any(taken[start : second + length]):
                start += 1
                continue
            pattern = _block_edges(start, length, edges)
            if not same(start, second, length) or _block_edges(second, length, edges) != pattern:
                start += 1
                continue
            count = 2
            while start + (count + 1) * length <= total:
                nxt = start + count * length
                if any(taken[nxt : nxt + length]) or not same(start, nxt, length):
                    break
                if _block_edges(nxt, length, edges) != pattern:
                    break
                count += 1
            found.append((operations[start]["id"], length, count))
            taken[start : start + count * length] = [True] * (count * length)
            start += count * length
    return sorted(found)

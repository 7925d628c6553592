"""The routings tt-metal's all_to_all perf tests run, as :mod:`meshnn.perf.sparse_a2a` counts them.

Facts of tt-metal tests/nightly/t3000/ccl/test_all_to_all_dispatch.py (gen_expert_mapping,
get_expert_indices; test_all_to_all_combine.py and tests/nightly/tg/ccl/*_6U.py use them):

- ``random`` mapping: experts placed on devices at random, each device holding ``experts / devices``;
  any other scheme: in order, device ``d`` holding experts ``d * per_device ...``;
- ``random`` ids: each token's ``k`` distinct experts drawn uniformly; ``worst_perf``: every one is
  the last expert (so every token goes to the last device, in the last row);
- each iteration draws new tensors; the perf tests report the largest DEVICE KERNEL time over the
  iterations and devices: :func:`scenario_routing` takes each count's maximum over the iterations and
  the mesh's groups.

The draws here are numpy's with a fixed seed (the tests use Python's ``random``): the same
distribution, not the same numbers.
"""

from __future__ import annotations

import numpy as np

from meshnn.perf import OpFamily
from meshnn.perf.a2a_combine import CombineLoad, combine_load
from meshnn.perf.sparse_a2a import Routing, routing_loads


def _mapping(rng: np.random.Generator, experts: int, devices: int, scheme: str) -> np.ndarray:
    placed = np.repeat(np.arange(devices), experts // devices)
    return rng.permutation(placed) if scheme == "random" else placed


def _ids(rng: np.random.Generator, groups: int, tokens: int, experts: int, k: int, scheme: str) -> np.ndarray:
    if scheme == "worst_perf":
        return np.full((groups, tokens, k), experts - 1, dtype=np.int64)
    ids = rng.integers(0, experts, (groups * tokens, k))
    while True:  # redraw the tokens that drew an expert twice (k distinct, uniform)
        ordered = np.sort(ids, axis=1)
        again = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if not len(again):
            return ids.reshape(groups, tokens, k)
        ids[again] = rng.integers(0, experts, (len(again), k))


def scenario_routing(
    family: OpFamily,
    mesh: tuple[int, int],
    tokens: int,
    experts: int,
    k: int,
    links: int,
    *,
    ring: bool,
    scheme: str,
    iterations: int = 1,
    local_reduce: bool = False,
    seed: int = 2005,
) -> Routing:
    """The counts of a dispatch or combine along axis 1 of ``mesh`` (rows of ``mesh[1]`` devices),
    ``tokens`` a device, the test's ``scheme``, max over ``iterations`` and the rows."""
    rng = np.random.default_rng(seed)
    rows, cols = mesh
    worst = Routing(0, 0, 0)
    for _ in range(iterations):
        owner = _mapping(rng, experts, rows * cols, scheme)
        for r in range(rows):
            ids = _ids(rng, cols, tokens, experts, k, scheme)
            group = tuple(r * cols + c for c in range(cols))
            got = routing_loads(family, owner, ids, group, links, ring=ring, local_reduce=local_reduce)
            worst = Routing(*(max(a, b) for a, b in zip(_t(worst), _t(got), strict=True)))
    return worst


def _t(r: Routing) -> tuple[int, int, int]:
    return (r.lane_pages, r.core_pages, r.core_tokens)


def combine_scenario(
    mesh: tuple[int, int],
    tokens: int,
    experts: int,
    k: int,
    links: int,
    *,
    iterations: int = 1,
    local_reduce: bool = True,
    seed: int = 2005,
) -> CombineLoad:
    """The sender cores of an all_to_all_combine along axis 1 of ``mesh`` (``tokens`` a device of the
    row, ``experts`` placed at random over the whole mesh, each token's ``k`` drawn uniformly: the ``random``
    scheme of tt-metal's combine tests, whose gen_tensors maps the experts over all ``rows x cols`` devices),
    every core's counts over ``iterations`` and the rows (:func:`meshnn.perf.a2a_combine.combine_load`): the model
    times the slowest."""
    rng = np.random.default_rng(seed)
    rows, cols = mesh
    load = CombineLoad((), experts)
    for _ in range(iterations):
        owner = _mapping(rng, experts, rows * cols, "random")
        for r in range(rows):
            ids = _ids(rng, cols, tokens, experts, k, "random")
            group = tuple(r * cols + c for c in range(cols))
            load = load.merged(combine_load(owner, ids, group, links, local_reduce=local_reduce))
    return load

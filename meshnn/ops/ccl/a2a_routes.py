"""The routes of the MoE all-to-all ops (:mod:`meshnn.ops.ccl.all_to_all`) over arrays of every
device's elements: which token row goes to which device and where it lands.

Arrays are indexed by the device's row in the op's launch (its index in the input's coords); a
group is a list of those rows in member order, and ``lin[row]`` is the device's row-major index in
the mesh (the expert mapping's column).  Elements are 2-byte patterns (bfloat16 tokens, uint16
ids), moved unchanged.

May import: numpy only.
"""

from __future__ import annotations

import numpy as np

Groups = tuple[list[list[int]], list[int]]
"""(the groups, each a list of device rows in member order; every row's mapping column)."""


def mapping_tables(values: np.ndarray) -> np.ndarray:
    """``(devices, E, D)`` booleans from every device's ``[1, 1, E, D]`` expert mapping values."""
    values = np.asarray(values)
    return values.reshape((values.shape[0], *values.shape[-2:])) == 1


def _holders(table: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ids clipped into the table, which ids name an expert of it)."""
    valid = (ids >= 0) & (ids < table.shape[0])
    return np.where(valid, ids, 0), valid


def dispatch_rows(
    sources: tuple[np.ndarray, np.ndarray, np.ndarray],
    outputs: tuple[np.ndarray, np.ndarray],
    groups: Groups,
    concat: int,
) -> None:
    """Write each group member's tokens ``(devices, B, 1, S, H)`` to the members holding one of its
    experts ``(devices, B, 1, S, K)`` (the sender's ``tables``), and its ids to every member, at the
    member's block of ``concat`` (1: batch, 2: sequence) of the outputs ``(devices, 1, B', S', *)``."""
    tokens, chosen, tables = sources
    out, meta = outputs
    members, lin = groups
    b, s = tokens.shape[1], tokens.shape[3]
    for group in members:
        for position, src in enumerate(group):
            tok, ids = tokens[src][:, 0], chosen[src][:, 0]  # (B, S, H), (B, S, K)
            clipped, valid = _holders(tables[src], ids)
            holds = tables[src][clipped] & valid[..., None]  # (B, S, K, D)
            block = (
                (0, slice(position * b, (position + 1) * b))
                if concat == 1
                else (0, slice(None), slice(position * s, (position + 1) * s))
            )
            for dst in group:
                mask = holds[..., lin[dst]].any(axis=-1)
                region = out[dst][block]
                region[mask] = tok[mask]
                meta[dst][block] = ids.astype(np.uint16)


def _owners(table: np.ndarray, columns: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """For each expert: the first group member holding it (-1: none) and its rank among that
    member's experts (ascending ids)."""
    held = table[:, columns]  # (E, G)
    owner = np.where(held.any(axis=1), held.argmax(axis=1), -1)
    ranks = np.cumsum(held, axis=0) - held
    local = ranks[np.arange(held.shape[0]), np.maximum(owner, 0)]
    return owner, local


def combine_rows(
    sources: tuple[np.ndarray, np.ndarray, np.ndarray], out: np.ndarray, groups: Groups, mode: tuple[int, bool]
) -> None:
    """Fill every device's ``(K, B', S', H)`` output from the group's expert outputs
    ``(devices, R, B, S, H)`` by the token ids of its metadata ``(devices, 1, B, S, K)`` and its own
    mapping; ``mode`` = (the split dim, 1 or 2; local_reduce)."""
    values, chosen, tables = sources
    split, local_reduce = mode
    members, lin = groups
    k_count, bo, so = out.shape[1:4]
    for group in members:
        columns = [lin[row] for row in group]
        for position, dst in enumerate(group):
            b0, s0 = (position * bo, 0) if split == 1 else (0, position * so)
            ids = chosen[dst][0, b0 : b0 + bo, s0 : s0 + so]  # (B', S', K)
            bg, sg = np.meshgrid(np.arange(b0, b0 + bo), np.arange(s0, s0 + so), indexing="ij")
            clipped, valid = _holders(tables[dst], ids)
            if local_reduce:
                _reduced(values, out[dst], (ids, clipped, valid, bg, sg), tables[dst], (group, columns))
                continue
            owner, local = _owners(tables[dst], columns)
            for k in range(k_count):
                e = clipped[..., k]
                ok = valid[..., k] & (owner[e] >= 0)
                rows = np.asarray(group)[np.maximum(owner[e], 0)]
                out[dst][k][ok] = values[rows[ok], local[e][ok], bg[ok], sg[ok]]


def _reduced(
    values: np.ndarray,
    out: np.ndarray,
    tokens: tuple[np.ndarray, ...],
    table: np.ndarray,
    group: tuple[list[int], list[int]],
) -> None:
    """local_reduce: each member's one summed row per token lands at the position ``k`` of the
    token's first expert (by id) that the member holds."""
    ids, clipped, valid, bg, sg = tokens
    rows, columns = group
    for member, column in zip(rows, columns, strict=True):
        held = table[clipped, column] & valid  # (B', S', K)
        anyheld = held.any(axis=-1)
        if not anyheld.any():
            continue
        first = np.where(held, ids, np.iinfo(np.int64).max).argmin(axis=-1)
        b_idx, s_idx = np.nonzero(anyheld)
        out[first[anyheld], b_idx, s_idx] = values[member, 0, bg[anyheld], sg[anyheld]]

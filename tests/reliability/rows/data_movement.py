"""Bad calls of the data movement family (meshnn/ops/movement, embedding, moreh_full, copies,
sharding moves) and of the small tensor questions ttnn has (is_tensor_storage_on_device...)."""

from __future__ import annotations

import numpy as np

import meshnn as ttnn

from ..cases import TYPE, VALUE, WRONG_MESH, Case


def _layout_rows() -> list[Case]:
    return [
        Case("stack", "shapes differ", lambda e: ttnn.stack([e.a, e.b], 0), VALUE, "input_tensors\\[1\\]"),
        Case("stack", "dim past rank + 1", lambda e: ttnn.stack([e.a, e.a2], 4), VALUE, "dim"),
        Case("stack", "a single tensor", lambda e: ttnn.stack(e.a, 0), TYPE, "input_tensors"),
        Case(
            "slice_write",
            "window is not the input's shape",
            lambda e: ttnn.slice_write(e.b, e.a2, [0, 0, 0], [1, 3, 40], [1, 1, 1]),
            VALUE,
            "window",
        ),
        Case(
            "slice_write",
            "steps of zero",
            lambda e: ttnn.slice_write(e.a, e.a2, [0] * 3, [1, 3, 40], [1, 0, 1]),
            VALUE,
            "steps",
        ),
        Case(
            "fill_implicit_tile_padding",
            "row-major input",
            lambda e: ttnn.fill_implicit_tile_padding(e.rm, 1.0),
            VALUE,
            "tile layout",
        ),
        Case(
            "fill_implicit_tile_padding",
            "fill is a string",
            lambda e: ttnn.fill_implicit_tile_padding(e.a, "1"),
            TYPE,
            "fill_value",
        ),
        Case("repeat_interleave", "repeats of zero", lambda e: ttnn.repeat_interleave(e.a, 0, 1), VALUE, "repeats"),
        Case("repeat_interleave", "dim past the rank", lambda e: ttnn.repeat_interleave(e.a, 2, 3), VALUE, "dim"),
        Case("sort", "dim past the rank", lambda e: ttnn.sort(e.rm, 4), VALUE, "out of range"),
        Case("indexed_fill", "rank 3", lambda e: ttnn.indexed_fill(e.ids, e.a, e.a2), VALUE, "rank-4"),
        Case("indexed_fill", "layouts differ", lambda e: ttnn.indexed_fill(e.ids, e.heads, e.rm), VALUE, "same layout"),
        Case("sort", "descending is an int", lambda e: ttnn.sort(e.a, -1, 1), TYPE, "descending"),
        Case("sort", "out of another dtype", lambda e: ttnn.sort(e.a, out=(e.a_bf16, e.a_bf16)), VALUE, "dtype"),
        Case(
            "pad",
            "front padding of tiles",
            lambda e: ttnn.pad(e.a, [(0, 0), (1, 0), (0, 0)], 0.0),
            VALUE,
            "front padding",
        ),
    ]


def _index_rows() -> list[Case]:
    return [
        Case("gather", "float index", lambda e: ttnn.gather(e.a, 1, index=e.a2), TYPE, "Index tensor"),
        Case("gather", "ranks differ", lambda e: ttnn.gather(e.a, 0, index=e.ids), VALUE, "number of dimensions"),
        Case("tosa_gather", "index of rank 1", lambda e: ttnn.tosa_gather(e.a, e.row7), VALUE, "Index tensor rank"),
        Case("scatter", "src of another dtype", lambda e: ttnn.scatter(e.rm, 0, e.ids, e.a_bf16), VALUE, "rank|dtype"),
        Case("scatter", "fp32 tiles", lambda e: ttnn.scatter(e.a, 0, e.ids, e.a), VALUE, "rank|fp32"),
        Case("scatter", "reduce sum", lambda e: ttnn.scatter(e.rm, -1, e.ids, e.rm, reduce="sum"), VALUE, "reduce"),
        Case("tosa_scatter", "index of rank 3", lambda e: ttnn.tosa_scatter(e.a, e.a, e.a), VALUE, "rank"),
        Case("index_fill", "float index", lambda e: ttnn.index_fill(e.a, 0, e.row7, 1.0), VALUE, "Index tensor"),
        Case(
            "index_fill",
            "value is a string",
            lambda e: ttnn.index_fill(e.a, 0, e.ids, "1"),
            VALUE,
            "Index tensor|value",
        ),
        Case("nonzero", "not [1, 1, 1, W]", lambda e: ttnn.nonzero(e.rm), VALUE, "input_tensor"),
        Case(
            "embedding",
            "PADDED without a pad token",
            lambda e: ttnn.embedding(e.ids, e.table, embeddings_type=ttnn.EmbeddingsType.PADDED),
            VALUE,
            "Pad token",
        ),
        Case(
            "embedding",
            "embeddings_type a string",
            lambda e: ttnn.embedding(e.ids, e.table, embeddings_type="GENERIC"),
            TYPE,
            "embeddings_type",
        ),
    ]


def _copy_rows() -> list[Case]:
    return [
        Case("copy", "shapes differ", lambda e: ttnn.copy(e.a, e.b), VALUE, "padded shape"),
        Case("copy", "on another mesh", lambda e: ttnn.copy(e.a, e.other), WRONG_MESH, "input_b"),
        Case("assign", "no memory_config", lambda e: ttnn.assign(e.a), TYPE, "memory_config"),
        Case("assign", "memory_config a string", lambda e: ttnn.assign(e.a, memory_config="L1"), TYPE, "memory_config"),
        Case(
            "assign",
            "uint16 copy",
            lambda e: ttnn.assign(e.a, memory_config=ttnn.L1_MEMORY_CONFIG, dtype=ttnn.uint16),
            VALUE,
            "dtype",
        ),
        Case(
            "experimental", "typecast to uint8", lambda e: ttnn.experimental.typecast(e.a, ttnn.uint8), VALUE, "dtype"
        ),
        Case(
            "reshard",
            "interleaved input",
            lambda e: ttnn.reshard(e.a, ttnn.L1_HEIGHT_SHARDED_MEMORY_CONFIG),
            VALUE,
            "input_tensor",
        ),
        Case("reshard", "config is a string", lambda e: ttnn.reshard(e.a, "L1"), VALUE, "input_tensor"),
        Case("moreh_full", "any is a number", lambda e: ttnn.moreh_full([2, 2], 1.0, 3), TYPE, "any"),
        Case("moreh_full", "fill is a string", lambda e: ttnn.moreh_full([2, 2], "1", e.mesh), TYPE, "fill_value"),
        Case("moreh_full_like", "input on the host", lambda e: ttnn.moreh_full_like(e.host, 1.0), VALUE, "input"),
        Case(
            "full",
            "optional_tensor on the host",
            lambda e: ttnn.full([1, 3, 40], 1.0, optional_tensor=e.host),
            VALUE,
            "optional_tensor",
        ),
        Case(
            "experimental",
            "convert_to_hwc of an interleaved input",
            lambda e: ttnn.experimental.convert_to_hwc(ttnn.reshape(e.rm, [1, 1, 3, 40])),
            VALUE,
            "sharded",
        ),
        Case(
            "experimental",
            "dropout probability 2",
            lambda e: ttnn.experimental.dropout(e.a, 2.0, 1.0, 1),
            VALUE,
            "probability",
        ),
        Case(
            "experimental",
            "dropout seed negative",
            lambda e: ttnn.experimental.dropout(e.a, 0.5, 2.0, -1),
            VALUE,
            "seed",
        ),
        Case(
            "is_tensor_storage_on_device",
            "not a tensor",
            lambda e: ttnn.is_tensor_storage_on_device(np.ones(2)),
            TYPE,
            "tensor",
        ),
        Case(
            "has_storage_type_of",
            "not a tensor",
            lambda e: ttnn.has_storage_type_of(3, ttnn.DEVICE_STORAGE_TYPE),
            TYPE,
            "tensor",
        ),
        Case("is_sharded", "a deallocated tensor", lambda e: ttnn.is_sharded(e.freed), ttnn.DeallocatedError, "tensor"),
    ]


def _fill_rm_rows() -> list[Case]:  # stop 47: tt-metal 2026's docs examples
    return [
        Case("fill_rm", "hOnes > H", lambda e: ttnn.fill_rm(1, 1, 32, 32, 33, 1, e.a_bf16, 1.0, 0.0), VALUE, "hOnes"),
        Case("fill_rm", "any not bfloat16", lambda e: ttnn.fill_rm(1, 1, 32, 32, 1, 1, e.a, 1.0, 0.0), TYPE, "any"),
        Case("fill_ones_rm", "a zero dim", lambda e: ttnn.fill_ones_rm(0, 1, 32, 32, 1, 1, e.a_bf16), VALUE, "N, C"),
        Case("fill_ones_rm", "any on the host", lambda e: ttnn.fill_ones_rm(1, 1, 32, 32, 1, 1, e.host), VALUE, "any"),
    ]


def rows() -> list[Case]:
    return [*_layout_rows(), *_index_rows(), *_copy_rows(), *_fill_rm_rows()]

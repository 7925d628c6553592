"""Bad calls of the reductions (issue 35): std / var / prod, the accumulations (cumsum, cumprod,
ema), topk and moe; argmax's ttnn rules (the last dim only, TILE needs a dim); fill_implicit_tile_padding."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import RM, TYPE, VALUE, Case


def rows() -> list[Case]:
    return seed_rows() + reduction_rows()


def reduction_rows() -> list[Case]:
    """The generic reductions, prod, argmax, the accumulations, topk, moe and fill_implicit_tile_padding."""
    return [
        Case("std", "dim past the rank", lambda e: ttnn.std(e.a, dim=3), VALUE, "dim"),
        Case("std", "correction is a string", lambda e: ttnn.std(e.a, dim=2, correction="yes"), TYPE, "correction"),
        Case("var", "dims repeat", lambda e: ttnn.var(e.a, dim=[1, -2]), VALUE, "dim"),
        Case("var", "scalar is a string", lambda e: ttnn.var(e.a, dim=2, scalar="2"), TYPE, "scalar"),
        Case("prod", "dim past the rank", lambda e: ttnn.prod(e.a, 3), VALUE, "Dimension"),
        Case("prod", "keepdim with every dim", lambda e: ttnn.prod(e.a_bf16, keepdim=True), VALUE, "keepdim"),
        Case("prod", "all dims of a float32 input", lambda e: ttnn.prod(e.a), VALUE, "BFLOAT16"),
        Case("prod", "NC form without dims", lambda e: ttnn.prod(e.heads, e.heads), VALUE, "dims"),
        Case("argmax", "not the last dim", lambda e: ttnn.argmax(e.rm, dim=1), VALUE, "last dim"),
        Case("argmax", "TILE input without dim", lambda e: ttnn.argmax(e.a), VALUE, "dim"),
        Case(
            "argmax",
            "use_multicore with TILE",
            lambda e: ttnn.argmax(e.a, dim=-1, use_multicore=True),
            VALUE,
            "ROW_MAJOR",
        ),
        Case("cumsum", "dim past the rank", lambda e: ttnn.cumsum(e.a, 3), VALUE, "dim"),
        Case("cumsum", "a ROW_MAJOR input", lambda e: ttnn.cumsum(e.rm, 0), VALUE, "tile layout"),
        Case("cumsum", "out of another shape", lambda e: ttnn.cumsum(e.a, 1, out=e.b), VALUE, "shapes"),
        Case("cumprod", "dtype is a string", lambda e: ttnn.cumprod(e.a, 1, dtype="float32"), TYPE, "dtype"),
        Case("cumprod", "out on the host", lambda e: ttnn.cumprod(e.a, 1, out=e.host), VALUE, "out"),
        Case("ema", "a rank-3 input", lambda e: ttnn.ema(e.a_bf16, 0.5), VALUE, "1, B, C, T"),
        Case("ema", "alpha is a string", lambda e: ttnn.ema(e.heads, "0.5"), TYPE, "alpha"),
        Case("ema", "a float32 input", lambda e: ttnn.ema(e.a, 0.5), TYPE, "BFLOAT16"),
        Case("topk", "dim past the rank", lambda e: ttnn.topk(e.heads, 2, dim=4), VALUE, "dim"),
        Case("topk", "largest is an int", lambda e: ttnn.topk(e.heads, 2, largest=1), TYPE, "largest"),
        Case("topk", "indices_tensor float", lambda e: ttnn.topk(e.heads, 2, indices_tensor=e.heads), TYPE, "UINT16"),
        Case("topk", "out values of float32", lambda e: ttnn.topk(e.heads, 2, out=(e.a, e.a)), TYPE, "out"),
        Case("moe", "k is not 32", lambda e: ttnn.moe(e.heads, e.heads, e.heads, 16), VALUE, "K must be equal to 32"),
        Case("moe", "inner dim below 64", lambda e: ttnn.moe(e.heads, e.heads, e.heads), VALUE, "inner dim"),
        Case("moe", "a ROW_MAJOR gate", lambda e: ttnn.moe(e.rm, e.heads, e.heads), TYPE, "input_tensor"),
        Case(
            "fill_implicit_tile_padding",
            "fill_value is a string",
            lambda e: ttnn.fill_implicit_tile_padding(e.a, "0"),
            TYPE,
            "fill_value",
        ),
        Case(
            "fill_implicit_tile_padding",
            "a ROW_MAJOR input",
            lambda e: ttnn.fill_implicit_tile_padding(e.rm, 0.0),
            VALUE,
            "tile layout",
        ),
        Case("sum", "memory_config is an int", lambda e: ttnn.sum(e.a, 1, memory_config=1), TYPE, "memory_config"),
        Case("mean", "keepdim is a string", lambda e: ttnn.mean(e.a, 1, keepdim="no"), TYPE, "keepdim"),
        Case("min", "output_layout is not taken", lambda e: ttnn.min(e.a, 1, output_layout=RM), TYPE, "output_layout"),
    ]


def seed_rows() -> list[Case]:
    """manual_seed and the integral image."""
    return [
        Case("manual_seed", "no device for a scalar seed", lambda e: ttnn.manual_seed(3), VALUE, "Device"),
        Case(
            "manual_seed",
            "user_ids past 31",
            lambda e: ttnn.manual_seed(3, device=e.mesh, user_ids=32),
            VALUE,
            "User IDs",
        ),
        Case("manual_seed", "seeds is a float", lambda e: ttnn.manual_seed(1.5, device=e.mesh), TYPE, "seeds"),
        Case("manual_seed", "device is a string", lambda e: ttnn.manual_seed(1, device="0"), TYPE, "device"),
        Case("intimg", "a rank-3 input", lambda e: ttnn.experimental.intimg(e.a), VALUE, "4D"),
        Case("intimg", "a ROW_MAJOR input", lambda e: ttnn.experimental.intimg(e.rm), VALUE, "4D|tile layout"),
    ]

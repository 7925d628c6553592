"""What a MeshBuffer holds, in a few words, for memory reports and pictures (``4096x1024 bf16``).

The mesh layer does not know tensors; the tensor layer registers the labeller (:func:`register`)
that names a buffer by the tensor viewing it.  Without one, buffers go unnamed.

Layers: imports nothing of meshnn.
"""

from __future__ import annotations

from collections.abc import Callable

_LABELLERS: list[Callable[[object], str | None]] = []


def register(labeller: Callable[[object], str | None]) -> None:
    """Use ``labeller(mesh_buffer)`` to name buffers (the last one registered wins)."""
    _LABELLERS[:] = [labeller]


def buffer_label(buffer: object) -> str | None:
    """The registered labeller's name for ``buffer``, or None."""
    for labeller in _LABELLERS:
        return labeller(buffer)
    return None


SHORT_DTYPES = {
    "BFLOAT16": "bf16",
    "BFLOAT8_B": "bfp8",
    "BFLOAT4_B": "bfp4",
    "FLOAT32": "f32",
    "UINT32": "u32",
    "INT32": "i32",
    "UINT16": "u16",
    "UINT8": "u8",
    "INT8": "i8",
}


def tensor_label(shape: object, dtype_name: str) -> str:
    """``4096x1024 bf16``: a shard's shape and its dtype, short."""
    dims = "x".join(str(d) for d in shape)  # type: ignore[attr-defined]
    return f"{dims} {SHORT_DTYPES.get(dtype_name, dtype_name.lower())}"

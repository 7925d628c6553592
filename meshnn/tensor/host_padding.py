"""``Tensor``'s host padding methods, ttnn's: ``pad``, ``pad_to_tile``, ``unpad`` and ``unpad_from_tile``,
each the free function of :mod:`meshnn.tensor.conversions` (host tensors, ROW_MAJOR but ``pad_to_tile``).

Layer: tensor.  Imports :mod:`meshnn.tensor.conversions` at the call (it imports the Tensor class).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class HostPadding:
    """The padding methods a :class:`~meshnn.tensor.tensor.Tensor` has (a base class of it, holding nothing)."""

    __slots__ = ()

    def pad(self, output_tensor_shape: Sequence[int], input_tensor_start: Sequence[int], pad_value: float) -> Any:
        """The tensor placed at ``input_tensor_start`` in a ``pad_value``-filled ``output_tensor_shape``."""
        from meshnn.tensor.conversions import pad_host

        return pad_host(self, output_tensor_shape, input_tensor_start, pad_value)  # type: ignore[arg-type]

    def pad_to_tile(self, pad_value: float) -> Any:
        """The last two dims padded with ``pad_value`` up to whole 32 x 32 tiles."""
        from meshnn.tensor.conversions import pad_to_tile

        return pad_to_tile(self, pad_value)  # type: ignore[arg-type]

    def unpad(self, output_tensor_start: Sequence[int], output_tensor_end: Sequence[int]) -> Any:
        """The values from ``output_tensor_start`` up to ``output_tensor_end`` (exclusive), as ttnn's
        host unpad computes its shape ``end - start``."""
        from meshnn.tensor.conversions import unpad_host

        return unpad_host(self, output_tensor_start, output_tensor_end)  # type: ignore[arg-type]

    def unpad_from_tile(self, output_tensor_shape: Sequence[int]) -> Any:
        """The ``output_tensor_shape`` corner, the tiles' padding dropped."""
        from meshnn.tensor.conversions import unpad_from_tile

        return unpad_from_tile(self, output_tensor_shape)  # type: ignore[arg-type]

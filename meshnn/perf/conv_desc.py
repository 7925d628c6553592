"""What the performance model needs of a convolution beyond its tensors: its window and the conv
config's fields that change how tt-metal's conv2d program runs (``Conv2dConfig``'s shard layout,
double buffers and activation reuse).  Filled by the conv ops (meshnn.ops.conv) and read by
:mod:`meshnn.perf.conv`.  Sizes are elements (positions, channels); no units of time here.
"""

from __future__ import annotations

from dataclasses import dataclass

from meshnn.device.buffer import TensorMemoryLayout


@dataclass(frozen=True, slots=True)
class ConvConfig:
    """One conv2d as its program runs: ``output`` is (out height, out width) per image,
    ``kernel`` / ``stride`` (h, w); ``shard_layout`` the conv config's (None: ttnn chooses);
    the three flags ``Conv2dConfig``'s ``enable_act_double_buffer``,
    ``enable_weights_double_buffer`` and ``enable_activation_reuse``; ``padding`` and ``dilation`` the
    window's; ``act_block_h`` the config's ``act_block_h_override`` (rows, a multiple of 32; 0: a core's rows
    in one block).
    Invariants: every size positive, ``groups`` divides both channel counts."""

    batch: int
    output: tuple[int, int]
    kernel: tuple[int, int]
    stride: tuple[int, int]
    in_channels: int
    out_channels: int
    groups: int = 1
    shard_layout: TensorMemoryLayout | None = None
    act_double_buffer: bool = False
    weights_double_buffer: bool = False
    activation_reuse: bool = False
    padding: tuple[int, int, int, int] = (0, 0, 0, 0)  # top, bottom, left, right
    dilation: tuple[int, int] = (1, 1)
    act_block_h: int = 0

    @property
    def runs_as_matmul(self) -> bool:
        """ttnn runs it as a matmul (``ttnn.linear``: MatmulDeviceOperation), not conv2d's program: a 1x1
        kernel at stride 1, no padding, no dilation, not width-sharded (conv2d_utils.cpp:
        use_matmul_for_1x1_conv)."""
        return (
            self.kernel == (1, 1)
            and self.stride == (1, 1)
            and not any(self.padding)
            and self.dilation == (1, 1)
            and self.shard_layout is not TensorMemoryLayout.WIDTH_SHARDED
        )

    @property
    def positions(self) -> int:
        """Output positions (rows of the im2col matrix): batch x out height x out width."""
        return self.batch * self.output[0] * self.output[1]

"""What the performance model needs of a convolution beyond its tensors: its window and the conv
config's fields that change how tt-metal's conv2d program runs (``Conv2dConfig``'s shard layout,
double buffers and activation reuse).  Filled by the conv ops (meshnn.ops.conv) and read by
:mod:`meshnn.perf.conv`.  Sizes are elements (positions, channels); no units of time here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from meshnn.device.buffer import TensorMemoryLayout


@dataclass(frozen=True, slots=True)
class ConvConfig:
    """One conv2d as its program runs: ``output`` is (out height, out width) per image,
    ``kernel`` / ``stride`` (h, w); ``shard_layout`` the conv config's (None: ttnn chooses);
    the three flags ``Conv2dConfig``'s ``enable_act_double_buffer``,
    ``enable_weights_double_buffer`` and ``enable_activation_reuse``; ``padding`` and ``dilation`` the
    window's; ``act_block_h`` the config's ``act_block_h_override`` (rows, a multiple of 32; 0: a core's rows
    in one block); ``slices`` the DRAM slices it runs in (1: one program; tt-metal's DRAM path,
    :mod:`meshnn.perf.conv_slices`), along the output's width when ``slice_width`` else its height.
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
    slices: int = 1
    slice_width: bool = True

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

    def input_extent(self, axis: int) -> int:
        """The input's height (``axis`` 0) or width (1) the window reads, padding aside: the span of its output
        positions' windows less the padding (a stride's leftover input columns beyond it not counted)."""
        out, k, s, d = self.output[axis], self.kernel[axis], self.stride[axis], self.dilation[axis]
        pad = self.padding[0] + self.padding[1] if axis == 0 else self.padding[2] + self.padding[3]
        return max(1, (out - 1) * s + d * (k - 1) + 1 - pad)

    def slice_windows(self, rounding: int = 1) -> list[ConvConfig]:
        """The conv of each of its :attr:`slices` (each one program, ``slices`` 1), as tt-metal's op_slicing.cpp cuts
        the output: the sliced dimension in units of ``rounding`` (32 for a TILE output sliced by width) split
        evenly, the first ``units % slices`` slices one unit more, empty slices dropped; each slice reads the input
        its windows cover and keeps only the padding that falls inside it (the first slice the leading pad, the
        last the trailing one)."""
        if self.slices <= 1:
            return [self]
        axis = 1 if self.slice_width else 0
        out, extent = self.output[axis], self.input_extent(axis)
        lead = self.padding[2] if axis else self.padding[0]
        s, span = self.stride[axis], self.dilation[axis] * (self.kernel[axis] - 1) + 1
        units = -(-out // rounding)
        base, rem = divmod(units, self.slices)
        windows, start = [], 0
        for i in range(self.slices):
            size = min(out - start, rounding * (base + (1 if i < rem else 0)))
            if size <= 0:
                continue
            first, last = start * s - lead, (start + size - 1) * s - lead + span  # input positions read, padding in
            pads = (max(0, -first), max(0, last - extent))
            output = (self.output[0], size) if axis else (size, self.output[1])
            padding = (*self.padding[:2], *pads) if axis else (*pads, *self.padding[2:])
            windows.append(replace(self, output=output, padding=padding, slices=1))
            start += size
        return windows

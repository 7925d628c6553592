"""Data movement ops beyond :mod:`meshnn.ops.data_movement`'s core (layout, dtype, permute,
memory configs), one module per sub-family: :mod:`.rearrange` (the kernels every move runs),
:mod:`.joining` (concat, stack), :mod:`.slicing` (slice, slice_write), :mod:`.padding` (pad,
fill_implicit_tile_padding), :mod:`.repeating` (repeat, repeat_interleave), :mod:`.indexing`
(gather, scatter and their TOSA forms, index_fill, nonzero), :mod:`.sorting` (sort),
:mod:`.copying` (copy, assign, experimental typecast), :mod:`.cnn` (convert_to_hwc / chw, fold),
:mod:`.dropout`.
"""

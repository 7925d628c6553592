"""The formats layer: the host byte formats of ttnn tensors, knowing nothing of meshes or tensors.

- ``dtypes``, ``layout``: ``DataType`` and its sizes; ROW_MAJOR / TILE (tiles, faces, tilize).
- ``bfloat16``: float32 <-> bfloat16 as ttnn rounds it.
- ``block_float``: the bfloat8_b / bfloat4_b formats and their integer reference rules;
  ``bfp_torch``: their torch kernels; ``bfp_tiles``: tile packers and unpackers (numpy, or torch
  per chunk); ``bfp_rows``: row packers (torch, straight from a row-major matrix);
  ``bfp_chunks``: a whole tensor's tiles packed and unpacked chunk by chunk over the host threads.
- ``elements``: each dtype's stored elements; ``packed_spec``: a tensor's packed size and the
  codec's checks; ``codec``: ``encode`` / ``decode`` (one array, or a tensor's shards in one pass)
  between values and the bytes of a shard; ``conversions``: host ``typecast`` and ``to_layout``.

It may import ``meshnn.errors`` and ``meshnn.host`` only; the tensor, ops and perf layers build on it.
"""

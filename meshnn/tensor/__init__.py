"""Typed tensors: specs and memory configs, host and device storage, the Tensor class, its
distribution over a mesh (topology, mappers, composers), and what a user does with one (put,
get, copy, convert, reshape, split into shards, free, save to a file).

May import: errors, host, formats, device, distributed, perf and mesh (the byte formats
themselves live in :mod:`meshnn.formats`).
"""

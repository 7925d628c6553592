"""Computation launched as MeshWorkloads.

How every op runs, shared by all of them:

- :mod:`~meshnn.ops.checks`: the checks of an op's arguments, made before anything is allocated;
- :mod:`~meshnn.ops.outputs`: output specs, preallocated outputs, output MeshBuffers and tensors;
- :mod:`~meshnn.ops.launch`: the launch, one MeshWorkload over the populated devices;
- :mod:`~meshnn.ops.shared_rows`: when replicated inputs let a kernel run on one device's rows;
- :mod:`~meshnn.ops.values`: slab rows decoded to values and values encoded into slab rows;
- :mod:`~meshnn.ops.memo`: the values memos on buffers, and a running kernel's bound rows;
- :mod:`~meshnn.ops.config`: the program / kernel config types ops accept.

The ops by family: :mod:`~meshnn.ops.eltwise` (package), :mod:`~meshnn.ops.matmul`,
:mod:`~meshnn.ops.normalization`, :mod:`~meshnn.ops.reduce`, :mod:`~meshnn.ops.data_movement`,
:mod:`~meshnn.ops.creation`, :mod:`~meshnn.ops.transformer` (package), :mod:`~meshnn.ops.ccl`
(package: the collectives).

May import: every layer below it (errors, host, formats, device, distributed, perf, mesh, tensor); never the public
root, compat, cli or testing.
"""

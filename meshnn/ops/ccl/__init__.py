"""Collectives across the mesh (``ttnn.all_gather``, ``ttnn.reduce_scatter``, ``ttnn.all_reduce``),
a module per collective beside what they share:

- :mod:`~meshnn.ops.ccl.arguments`: ``ttnn.Topology`` and the checks of the arguments;
- :mod:`~meshnn.ops.ccl.groups`: the device groups along ``cluster_axis`` and the regrouping of
  values;
- :mod:`~meshnn.ops.ccl.ranks`: moving values across MPI ranks;
- :mod:`~meshnn.ops.ccl.all_gather`, :mod:`~meshnn.ops.ccl.all_reduce`,
  :mod:`~meshnn.ops.ccl.reduce_scatter`: the collectives;
- :mod:`~meshnn.ops.ccl.point_to_point`, :mod:`~meshnn.ops.ccl.broadcast`, :mod:`~meshnn.ops.ccl.barrier`,
  :mod:`~meshnn.ops.ccl.all_to_all` (with :mod:`~meshnn.ops.ccl.a2a_routes`): the exchanges (one
  shard to another device, one or every shard to a group, a barrier, MoE tokens to their experts'
  devices and back), within one process.

Every device of a group ends with the same gathered or reduced result; ``reduce_scatter`` leaves
device i of a group with slice i of ``dim``.  On the simulated mesh a collective is a
rearrangement of slab rows along a mesh axis (sums in float32).  Across MPI ranks the kernel runs
once per rank, over all of its local devices.

May import (each module): every layer below the ops and the ops' launch, checks, outputs, memo
and values modules.
"""

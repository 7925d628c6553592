"""``ttnn.generic_op`` and its program descriptors: a program described as plain data (kernels by
source path, circular buffers, semaphores, per-core runtime arguments) and run by meshnn when
every kernel is one of the library's (tt-metal's own kernels, whose behaviour is known).

- :mod:`~meshnn.ops.generic.enums`: tt-metal's closed sets (``DataMovementProcessor``,
  ``NOC_MODE``, ``CoreType``, ``UnpackToDestMode``, ``KernelBuildOptLevel``, tt-metal's data formats);
- :mod:`~meshnn.ops.generic.cb_desc`: tiles, circular buffers and semaphores;
- :mod:`~meshnn.ops.generic.kernel_desc`: kernel configs, ``RuntimeArgs``, ``KernelDescriptor``;
- :mod:`~meshnn.ops.generic.program_desc`: ``ProgramDescriptor``, ``MeshProgramDescriptor``, merging;
- :mod:`~meshnn.ops.generic.exports`: the names ``meshnn`` re-exports;
- :mod:`~meshnn.ops.generic.sfpu_chain`: a compute kernel's ``SFPU_OP_CHAIN_0`` define read as unary ops;
- :mod:`~meshnn.ops.generic.machine`: one device's cores (circular-buffer page queues, buffers by address);
- :mod:`~meshnn.ops.generic.library`: the kernels meshnn runs, by tt-metal's source path;
- :mod:`~meshnn.ops.generic.generic_op`: the op.
"""

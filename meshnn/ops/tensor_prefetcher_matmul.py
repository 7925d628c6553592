"""``ttnn.experimental.tensor_prefetcher_matmul``: tt-metal 2026's Python helper module (not a bound
op) that pairs a tensor-prefetcher request with the matmul that consumes it.

``prefetch_and_linear(input_tensor_a, weight, *, global_cb, program_config, cq_id=None, **kw)``
queues ``weight`` into the DRAM-sender ``global_cb`` in as many blocks as the buffer has receiver
cores (the gather_in0 matmul waits for one page a receiver a layer: the only count that balances
its credits), then returns ``ttnn.linear(input_tensor_a, weight, program_config=..., global_cb=...,
**kw)``.  Every check is the two ops' own.

May import: :mod:`meshnn.ops.registry` (the two ops are looked up there at call time, so
``ttnn.experimental`` holds this module without loading the op catalog).
"""

from __future__ import annotations

from meshnn.ops.registry import family_of


def prefetch_and_linear(
    input_tensor_a: object,
    weight: object,
    *,
    global_cb: object,
    program_config: object,
    cq_id: int | None = None,
    **linear_kwargs: object,
) -> object:
    """Queue ``weight``'s prefetch into ``global_cb`` (block count: its receiver cores), then the
    ``ttnn.linear`` of ``input_tensor_a`` and ``weight`` that reads it from there."""
    queue = family_of("experimental.queue_tensor_prefetcher_request").function  # type: ignore[union-attr]
    linear = family_of("linear").function  # type: ignore[union-attr]
    blocks = global_cb.receiver_cores().num_cores()  # type: ignore[attr-defined]
    queue(
        input_tensor_a.device(),  # type: ignore[attr-defined]
        [(weight, blocks)],
        global_cb=global_cb,
        cq_id=cq_id,
    )
    return linear(input_tensor_a, weight, program_config=program_config, global_cb=global_cb, **linear_kwargs)

"""moreh's ops under tt-metal 2026's top-level names: ``ttnn.moreh_<op>`` is the very function of
``ttnn.operations.moreh.<op>`` (the registry's alias), and computes what it computes."""

from __future__ import annotations

import numpy as np

import meshnn as ttnn
from meshnn.ops import registry
from meshnn.ops.moreh_names import TOP_LEVEL


def test_every_top_level_name_is_the_namespace_op():
    moreh = registry.namespace_ops("moreh")
    for op in TOP_LEVEL:
        assert getattr(ttnn, f"moreh_{op}") is moreh[op], op
    assert set(TOP_LEVEL) == set(moreh) - {"abs_pow"}  # every moreh op meshnn has


def test_moreh_cumsum_is_a_running_sum(open_mesh):
    mesh = open_mesh((1, 1))
    values = np.arange(2 * 3 * 32 * 32, dtype=np.float32).reshape(2, 3, 32, 32) % 5 - 2
    x = ttnn.from_torch(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh)
    got = ttnn.to_torch(ttnn.moreh_cumsum(x, dim=1)).float().numpy()
    np.testing.assert_array_equal(got, np.cumsum(values, axis=1))  # small integers: exact in bfloat16

"""Bad calls of what the lead changed in stop 53: ``experimental.all_gather_async``'s 2026
``use_broadcast`` and ``experimental.all_reduce_async`` on a tensor populating some of the devices."""

from __future__ import annotations

import meshnn as ttnn

from ..cases import TYPE, VALUE, Case


def rows() -> list[Case]:
    ag, ar = ttnn.experimental.all_gather_async, ttnn.experimental.all_reduce_async
    return [
        Case(
            "experimental.all_gather_async",
            "use_broadcast a string",
            lambda e: ag(e.a, None, 2, e.sems[:2], use_broadcast="yes"),
            TYPE,
            "use_broadcast",
        ),
        Case(
            "experimental.all_reduce_async",
            "num_devices not the populated devices",
            lambda e: ar(e.a, 3, e.sems[:2], e.sems[:3], e.sems[:2], ttnn.ReduceType.Sum),
            VALUE,
            "num_devices 3",
        ),
    ]

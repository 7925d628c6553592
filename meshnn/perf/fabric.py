"""The Ethernet fabric's figures for collectives, per chip architecture, fitted to Tenstorrent's CCL
bandwidth report and kept apart from the chip's own figures (:mod:`meshnn.perf.hardware`).

The report [tt-metal: tech_reports/CCLs/CCL_bandwidth.md, results/SUMMARY_* and FULL_*] times
``all_gather`` and ``reduce_scatter`` (and ``all_reduce``, "a reduce-scatter followed by an
all-gather over the same links") from 4 KiB to 8 GiB on lines of 2, 4 and 8 devices and the ring of
8, one call at a time, traced.  What a call costs, per collective (all_gather, reduce_scatter):

- **start-up**: a per-call cost (the entry barrier, opening fabric connections, the exit wait) and a
  cost per hop of the diameter (``N-1`` on a line, ``N/2`` on a ring; the ring's deadlock-avoidance
  flow control makes its hop dearer), both fitted to the smallest sizes;
- **bandwidth**: the bytes through the busiest link over the line rate times the asymptotic
  utilisation the report measured for that collective, topology and device count;
- **the ramp**: between the two, worker counts and synchronisation granularity grow with size
  ("Steps in the ramp"), which the report's straight-line fit misses by up to 58%: a term
  ``ramp * sqrt(bytes per link per direction in MB)`` fitted to the mid sizes;
- **one-shot reduce_scatter**: on a ring, up to 512 KiB per device, ttnn.reduce_scatter uses a
  one-shot direct algorithm "which sends about 2.3x the bytes" (the report's words; on Blackhole too,
  tt-metal's reduce_scatter.cpp, though there the fitted start-up holds the extra bytes: factor 1.0),
  and past a worker's L1 staging budget reads its arrivals back (:mod:`meshnn.perf.collectives`);
- **launch skew**: a call alone starts on its devices at slightly different times, and its entry
  barrier and mux ready poll "block for however long cross-device launch skew happens to be" (the
  report); a call right behind another collective on the same devices finds them aligned by that
  call's exit and does not wait: each of its phases is ``launch_skew_ns[topology]`` shorter.  The
  saving depends on the fabric the report ran: back to back, calls on the ring (``FABRIC_1D_RING``)
  save 3.1 us a phase, calls on a line (``FABRIC_1D``) about 0.6 (the report does not say why).  The ring's
  figure also stands for the peers' arrival skew of RMSAllGather's in-program gather, whose devices come from
  collectives on the other mesh axis (:func:`meshnn.perf.rms_all_gather.arrival_skew_ns`, on either fabric).

An all_reduce costs its reduce_scatter plus its all_gather (no constant of its own: every all_reduce
row of the report is a check).  The start-up terms are those of the report's programs, whose workers
forward every slice hop by hop behind an entry barrier; the Llama decode programs that write straight
to their targets through the fabric's routers (:mod:`meshnn.perf.collectives`, "direct programs") take
an op's launch and the fabric's per-hop latency instead, and only the utilisation and ramp from here,
with ``packet_ns``: the EDM's time per packet of one sender, from tt-metal's EDM bandwidth goldens
(its packet rate with 16-byte packets, where the bytes cost nothing).
- **a line all_gather's local copy**: on a line, the workers that send a device's slice backward also write it to
  the device's own output, waiting for those writes (``noc_async_write_barrier``) every packet
  (minimal_default_writer.cpp, direction 1); on a line of 2 the far device's every packet is such a one, and on
  Blackhole its 2 workers a link move 13.3 GB/s (1.24 us an 8 KiB packet each) where the ring's 2 workers, relaying
  slices without the copy, move 20: ``copy_worker_bytes_per_s`` bounds the transfer of a line all_gather at the
  device's slice over its workers (:func:`meshnn.perf.collectives.local_copy_ns`), which binds on the line of 2 only
  (longer lines carry the other devices' slices on the same link).
Figures: ``_ns`` nanoseconds, utilisation a fraction of line rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from meshnn.device.arch import Arch
from meshnn.perf.desc import OpFamily, Topology

REPORT = "tt-metal: tech_reports/CCLs/results/SUMMARY_{arch} and FULL_{arch}"
AG, RS = OpFamily.ALL_GATHER, OpFamily.REDUCE_SCATTER
L, R = Topology.LINEAR, Topology.RING

UtilKey = tuple[OpFamily, Topology, int]


@dataclass(frozen=True, slots=True)
class FabricPerf:
    """The collective figures of one architecture; ``sources`` names where each came from."""

    arch: Arch
    invocation_ns: dict[OpFamily, float]  # per call, all_gather and reduce_scatter
    hop_ns: dict[tuple[OpFamily, Topology], float]  # per hop of the diameter
    utilization: dict[UtilKey, float]  # asymptotic fraction of line rate per link, by device count
    ramp_ns: dict[OpFamily, float]  # x sqrt(MB per link per direction)
    one_shot_factor: float  # bytes factor of a ring reduce_scatter at or below one_shot_max_bytes
    one_shot_max_bytes: int  # per device
    launch_skew_ns: dict[Topology, float]  # per phase and fabric: what a call alone waits that one behind does not
    packet_ns: float  # the EDM's time per packet of one sender (1 / its packet rate with 16-byte packets)
    copy_worker_bytes_per_s: float | None  # a line all_gather worker's rate on packets that carry its local copy
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def utilization_for(self, family: OpFamily, topology: Topology, devices: int) -> float:
        """The utilisation measured at ``devices`` on this topology, else at the nearest device count
        measured (a line of 3 as the line of 2 or 4 nearer it; longer lines as the longest measured)."""
        counts = sorted(n for f, t, n in self.utilization if f is family and t is topology)
        nearest = min(counts, key=lambda n: (abs(n - devices), -n))
        return self.utilization[(family, topology, nearest)]

    def missing_sources(self) -> list[str]:
        """Figures without a source (a test keeps this empty)."""
        return [f.name for f in fields(self) if f.name not in ("arch", "sources") and f.name not in self.sources]


def _util(rows: dict[tuple[str, str, int], float]) -> dict[UtilKey, float]:
    family = {"ag": AG, "rs": RS}
    topology = {"line": L, "ring": R}
    return {(family[f], topology[t], n): u for (f, t, n), u in rows.items()}


_FIT = (
    "fitted by least squares (relative error) to the report's smallest size, 64 KiB, 4 MiB and 1 GiB rows of "
    "each device count and topology ({rows}); every other row is a check (tests/perf/published.py)"
)

_EDM = (
    "tt-metal: tests/tt_metal/microbenchmarks/ethernet/golden/{file}, rows unicast_Linear (noc_unicast_write, "
    "a line of 2, one link, one sender, unidirectional)"
)

WORMHOLE_B0 = FabricPerf(
    arch=Arch.WORMHOLE_B0,
    invocation_ns={AG: 4541.0, RS: 2390.0},
    hop_ns={(AG, L): 1956.0, (AG, R): 3119.0, (RS, L): 3627.0, (RS, R): 3056.0},
    utilization=_util(
        {
            ("ag", "line", 2): 0.508,
            ("ag", "line", 4): 0.952,
            ("ag", "line", 8): 0.937,
            ("ag", "ring", 8): 0.824,
            ("rs", "line", 2): 0.707,
            ("rs", "line", 4): 0.847,
            ("rs", "line", 8): 0.908,
            ("rs", "ring", 8): 0.691,
        }
    ),
    ramp_ns={AG: 1561.0, RS: 15769.0},
    one_shot_factor=2.3,
    one_shot_max_bytes=512 * 1024,
    launch_skew_ns={R: 3140.0, L: 630.0},
    packet_ns=1e9 / 3.05e6,
    copy_worker_bytes_per_s=None,
    sources={
        "invocation_ns": _FIT.format(rows="wormhole_b0_bfloat16_6144, T3000 LoudBox, 1 link"),
        "hop_ns": _FIT.format(rows="wormhole_b0_bfloat16_6144"),
        "utilization": _FIT.format(rows="wormhole_b0_bfloat16_6144; lines of 8 from FULL_"),
        "ramp_ns": _FIT.format(rows="wormhole_b0_bfloat16_6144"),
        "one_shot_factor": f"{REPORT}: 'Up to 512 KiB per device it uses a one-shot direct algorithm, which "
        "sends about 2.3x the bytes' (ring reduce_scatter, Wormhole)",
        "one_shot_max_bytes": f"{REPORT}: the same sentence (512 KiB per device)",
        "launch_skew_ns": "fitted: FULL_wormhole_b0_bfloat16_6144, ring of 8, 16 KiB: all_gather alone 17.61 us, "
        "eight back to back 14.47 us a call (3.14 us); checked on the reduce_scatter (19.61 -> 15.49) and the "
        "all_reduce (two phases: 35.80 -> 30.08) of the same rows.  Line: the same table's 'line, DRAM, 8 calls "
        "back to back', the all_gather of 2 at its smallest size, 4 KiB (7.09 us alone, 6.46 back to back: "
        "0.63 us); its other 17 rows (lines of 2, 4, 8; 4 to 16 KiB; all three collectives) are checks",
        "packet_ns": f"{_EDM.format(file='wormhole/fabric_edm_bandwidth_golden_6u.csv')}: 3.050 Mpps with 16-byte "
        "packets, 3.047 with 2 KiB ones (flat: a cost per packet), 2.63 with 4 KiB ones (bytes-bound)",
        "copy_worker_bytes_per_s": f"{REPORT}: not modelled on Wormhole (None): its line of 2 runs at 51% of line "
        "rate with 2 workers and with 4 alike (6.5 and 6.35 GB/s), a bound its fitted utilisation holds",
    },
)

BLACKHOLE = FabricPerf(
    arch=Arch.BLACKHOLE,
    invocation_ns={AG: 2770.0, RS: 851.0},
    hop_ns={(AG, L): 1348.0, (AG, R): 2238.0, (RS, L): 3523.0, (RS, R): 2695.0},
    utilization=_util(
        {
            ("ag", "line", 2): 0.988,
            ("ag", "line", 4): 0.949,
            ("ag", "line", 8): 0.994,
            ("ag", "ring", 8): 0.953,
            ("rs", "line", 2): 0.770,
            ("rs", "line", 4): 0.820,
            ("rs", "line", 8): 0.868,
            ("rs", "ring", 8): 0.802,
        }
    ),
    ramp_ns={AG: 7022.0, RS: 12736.0},
    one_shot_factor=1.0,
    one_shot_max_bytes=512 * 1024,
    launch_skew_ns={R: 0.0, L: 0.0},
    packet_ns=1e9 / 4.211e6,
    copy_worker_bytes_per_s=6.633e9,
    sources={
        "invocation_ns": _FIT.format(rows="blackhole_bfloat16_8192, Blackhole Galaxy, 2 links"),
        "hop_ns": _FIT.format(rows="blackhole_bfloat16_8192"),
        "utilization": _FIT.format(rows="blackhole_bfloat16_8192")
        + "; the lines of 8 (in FULL_blackhole_bfloat16_8192 only) fitted alone, the other constants held: "
        "their own utilisation instead of the line of 4's (which had understated the line of 8's asymptote)",
        "ramp_ns": _FIT.format(rows="blackhole_bfloat16_8192 (fitted over 2 links: x sqrt(2) per link)"),
        "one_shot_factor": f"{REPORT}: the one-shot reduce_scatter is described for Wormhole only; the "
        "Blackhole rows show no 2.3x step below 512 KiB (1.0: the start-up and hop constants, fitted to the ring's "
        "16 and 64 KiB rows, which the one-shot program ran, hold its extra bytes)",
        "one_shot_max_bytes": "tt-metal: ttnn/cpp/ttnn/operations/ccl/reduce_scatter/reduce_scatter.cpp, "
        "k_direct_rs_max_input_bytes (512 KiB of per-device input; its gate measured on a Blackhole ring of 8, "
        "2026-07-31, before the report's runs of 2026-09): the one-shot program runs on Blackhole too",
        "launch_skew_ns": f"{REPORT}: no back-to-back rows for Blackhole (0: not modelled, a call behind "
        "another costs what it costs alone)",
        "packet_ns": f"{_EDM.format(file='blackhole/fabric_edm_bandwidth_golden.csv')}: 4.211 Mpps with 16-byte "
        "packets, the same with 2 and 4 KiB ones",
        "copy_worker_bytes_per_s": "fitted: SUMMARY_blackhole_bfloat16_8192, all_gather on the line of 2 at 1 MiB "
        "(23.88 us: 262,144 B a link over 2 workers, the start-up's 4.12 us off); its 256 and 512 KiB rows (2 workers "
        "too) check it (1.24 us an 8 KiB packet a worker; the model's other terms, fitted at 64 KiB, 4 MiB and 1 GiB, "
        "had them 12 and 15% under)",
    },
)

FABRICS: dict[Arch, FabricPerf] = {WORMHOLE_B0.arch: WORMHOLE_B0, BLACKHOLE.arch: BLACKHOLE}


def fabric_perf(arch: Arch | str) -> FabricPerf:
    """The collective figures of ``arch`` (an :class:`Arch` or its value)."""
    return FABRICS[arch if isinstance(arch, Arch) else Arch(arch)]

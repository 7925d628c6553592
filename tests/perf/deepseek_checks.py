"""What stop 56 checked for the DeepSeek figures outside the claim (:mod:`tests.perf.published_deepseek_mla`,
:mod:`tests.perf.published_deepseek_modules`), appended to each one's ``why_not``: how each target is measured,
and the per-transaction NoC costs that tt-metal measured on Wormhole, against what the model counts.

The NoC figures are tt-metal's NoC estimator table (``NOC``): cycles from the first transaction to the barrier
after the last, measured by tests/tt_metal/tt_metal/data_movement/noc_estimator_tests (unicast, L1 unless said,
every transaction issued back to back, then one barrier), by pattern, transaction size and count.  The rows used
(Wormhole, NoC 0):

* ONE_FROM_ONE (one core reads another's L1): a 2 KB read alone 366 cycles; 16 back to back 1,460, 64 4,939
  (73 a read, 28 B a cycle).  ONE_FROM_ALL (one core reads 55 cores' L1, 2 KB): 55 reads 3,932 cycles (71.5 a
  read), 880 58,210 (66).  The same from DRAM interleaved: a 2 KB read alone 479 cycles.
* ONE_TO_ONE (one core writes another's L1): 64 to 512 B writes 23 cycles each back to back (256 of them
  5,907-5,922 cycles), 1 KB 35, 2 KB 68; a 64 B write alone with its barrier 293.
* ALL_TO_ALL / ALL_FROM_ALL (every core of a grid writes to / reads from every core of it, each walking the
  destinations in the same order): on the 56-core grid, 256 a destination, a write costs 35 cycles at 64 B, 77 at
  256 B, 147 at 512 B, 568 at 2 KB; a 2 KB read 789 (14,336 a core) to 1,875 (896); on a 2x2 grid a 2 KB read 134
  (64 a core).
"""

from __future__ import annotations

NOC = (
    "tt-metal's NoC estimator table (tt_metal/impl/experimental/noc_estimator/latencies/noc_latencies.yaml, "
    "cycles measured on Wormhole by tests/tt_metal/tt_metal/data_movement/noc_estimator_tests)"
)
TRACED_ONE_CHIP = (
    "The target is the device kernel time of 90 traced calls in a row (one trace of 100, the first 10 rows "
    "dropped) on one chip opened with its dispatch cores on a column (the `device` fixture: a 7 x 10 grid, 70 "
    "cores, where the model's Galaxy grid is 8 x 9)"
)
HOT_ORDER = (
    "those rows walk the destinations in one order, every core on the same one at once, where this op's pages lie "
    "on distinct banks at each step (page p on bank p mod 70); taken for every data-movement program they would "
    "put flash_mla_out_reshard (fitted: 16 writers of 16 tiles) near +50%, so they are not taken"
)

MLA: dict[str, str] = {
    "flash_mla_reshard": (
        f"Checked for stop 56 ({NOC}): one reader's back-to-back 2 KB L1 reads cost 73 cycles each from one core "
        "and 71.5 from 55 cores (28 B a cycle), and the table reaches 134 cycles a read only where several readers "
        f"share their sources (a 2x2 grid each reading all four), not this op's readers of pages spread over 70 "
        f"banks.  {TRACED_ONE_CHIP}.  Against kvpe_reshard (met) the time grows with the bytes, not the readers: "
        "147 KB in 2.45 us there and 590 KB in 8.9 us here after the launch (16 readers; 2.36 MB in 8.4 us with "
        "the 64 readers of the figure's date), 60 and 66 (or 282) B a cycle over the chip: what sets that rate is "
        "not found"
    ),
    "kv_rope_permute_post": (
        "Checked for stop 56: the target times TransposeDeviceOperation (test_permute_deepseek_perf's op_name), the "
        f"program modelled.  Its per-core work at the measured costs ({NOC}: a 2 KB L1 read alone 366 cycles, a 64 B "
        "write alone with its barrier 293) is about 0.68 us (two 32 B face-row writes, one barrier), as the model "
        "counts it (0.72); the 1.3 us then leaves about 0.6 us for the launch of 64 working cores, below the 0.87 us "
        "that the slices' per-core term gives at 48 (q_slice).  That term is concave in the cores (0.31 us from 2 "
        "to 16 cores, 0.21 from 16 to 48): a log2 fit (0.25 + 0.103 log2 N us) gives 0.88 us at 70 cores and this "
        "op 1.60 us (+23%); the slices read and write 2 KB a core where this op writes 64 B, so the slices' growth "
        "is taken to be their traffic, which the model has no figure for, not the launch of cores; on the test's "
        "70-core grid the model gives 1.84 us"
    ),
    "attn_out_permute_pre_linear": (
        f"Checked for stop 56, what a write of a few hundred bytes costs the issuing core ({NOC}): 64 to 512 B "
        "writes back to back cost 23 cycles each, a 1 KB one 35, a 2 KB one 68, so the NoC's issue of these padded "
        "writes is cheaper than the model's 66, not dearer; the writer's padding loop (writer_unary_transpose_hc_"
        "interleaved_tiled_padding_aware.cpp at 3ae31814d8) computes each padded tile's place with divides by "
        "compile-time constants and one TensorAccessor address a face.  Only the table's 56-core ALL_TO_ALL rows "
        "(256 B 77, 512 B 147 cycles a write; about 130 for this op's 384 and 512 B writes) reach the 136 measured, "
        f"and would give about 31.7 us, but {HOT_ORDER}.  On the test's 70-core grid with kvpe_permute refitted the "
        "model gives 22.1 us (-31%; q_nope_permute_pre_linear then -19.5%)"
    ),
    "q_concat": (
        f"Checked for stop 56 ({NOC}): a waited 2 KB L1 read alone costs 366 cycles (the model 338) and a 2 KB write "
        "68 to issue, so the 766-860 cycles a tile measured with every core reading and writing at once is not a "
        "lone transfer's cost.  The table's 56-core rows (a 2 KB write 568 cycles, a 2 KB read 789 to 1,875) "
        f"bracket it, but {HOT_ORDER}.  {TRACED_ONE_CHIP}: 576 tiles over 70 cores put 9 on 16 of them (8 a core on "
        "the model's 72): 4.42 us (-45%) on that grid"
    ),
    "wq_kv_a_ag_decode": (
        "Checked for stop 56: the target averages the op's rows over 100 calls of one trace, back to back (the "
        "warm-up drop of 10 x 32 rows leaves the last 60 calls of the 8 devices that run it), so a start skew "
        "across the devices weighs on its first call only; the test asks FABRIC_1D_RING and Ring on an 8 x 4 mesh "
        "whose 8 devices of the tensor are two mesh rows of 4"
    ),
    "wo_ag_decode": "Checked for stop 56: as wq_kv_a_ag_decode (100 traced calls back to back, the last 60 timed)",
}
"""Stop 56's checks of the MLA figures outside the claim, by step."""

SKEW = (
    "Checked for stop 56, what the target measures: test_ds_all_gather_embedding.py times each call alone "
    "({how}, synchronize_device after each), so each call starts on idle devices and a device's kernel time "
    "holds its wait for peers that start later.  The decode distributed rms_norm module, timed the same way, "
    "gathers over 8 consecutive devices of the 4 x 8 mesh (cluster_axis 1) and is met (+7%); this gather's 4 "
    "devices (cluster_axis 0) lie 8 apart in the mesh's row-major order: a start skew growing with the devices' "
    "distance in dispatch order would separate them, but no published figure measures a TG's launch skew (the "
    "model's is the CCL report's T3000 back-to-back saving, 0.63 us a line phase), so none is fitted"
)
MODULES: dict[tuple[str, str], str] = {
    ("all_gather of the embedding", "decode"): SKEW.format(how="decode: one traced all_gather an execute_trace"),
    ("all_gather of the embedding", "prefill 128"): SKEW.format(how="prefill: eager calls"),
    ("distributed rms_norm 7168", "prefill 128"): (
        "Checked for stop 56: the module runs three device ops only (distributed_rms_norm.py: "
        "rms_norm_pre_all_gather, all_gather_async, rms_norm_post_all_gather), all in the recorded rows, so no "
        "op is missing; prefill is timed eager with a synchronize after each forward, as the embedding's gather "
        "(-52%, its devices 8 apart); this gather's 8 devices are consecutive, and its traced decode twin is met"
    ),
}
"""Stop 56's checks of the module figures outside the claim, by (module, mode)."""

"""What stop 57 checked for the DeepSeek MLA figures still outside the claim
(:mod:`tests.perf.published_deepseek_mla`), appended to each one's ``why_not`` after stop 56's
(:mod:`tests.perf.deepseek_checks`): the programs and placements at the figures' date (tt-metal 3ae31814d8 and
42ae7f5fe7, 2026-02-03/04), and the per-tile times the page programs' measurements give together.
"""

from __future__ import annotations

PAGE_TIMES = (
    "Checked for stop 57, the page programs' measured times side by side, the launch taken as the model's on 2 cores "
    "(0.35 us): a tile read and written costs a core 0.60 us with 2 cores at it (kv_rope_slice), 0.91 with "
    "16 (kv_nope_slice), 1.12 with 48 (q_slice), 1.49 with 64 (q_rope_slice), 0.96 a tile with 70 cores at up to "
    "2 (q_nope_slice), 0.85 with 70 at 9 (q_concat); 64 cores reading a tile and writing 64 B take 0.95 "
    "(kv_rope_permute_post).  So a core's tile grows dearer with the cores moving tiles at once, where the model "
    "puts that growth in its launch (11.3 cycles a core, fitted on the slices) and charges kv_rope_permute_post's "
    "72 cores for it though they move 64 B a core out; q_concat moves 2.36 MB in and out at 295 B/ns over the "
    "call.  A congestion model (a transfer's cost by the transfers in flight over the chip) would take these "
    "together, but no published figure separates a transfer's cost from the cores moving at once, so none is "
    "fitted"
)
LINE_OF_TWO_ROWS = (
    "Checked for stop 57, the placement and the route: the test's mapper (MeshMapperConfig [Replicate, "
    "Shard(1)] with a (1, 8) shape on the 8 x 4 mesh) puts the 8 shards on the mesh's first 8 devices in "
    "row-major order (distributed_tensor.cpp's ROW_MAJOR remap at 42ae7f5fe7: (0,0)..(0,3), (1,0)..(1,3)); with no "
    "cluster_axis, ccl_common.cpp's get_boundary_mode gives NONE (the last device, (1,3), is not (7,3)), so the "
    "gather runs as a line in that order, each device's neighbours its neighbours in the list.  (0,3) and (1,0) "
    "are not mesh neighbours, and fabric.cpp's 1D connection (append_fabric_connection_rt_args) looks for the "
    "destination among the source's neighbours: how the measured program routed that pair is not found.  Were it "
    "routed (0,3)-(1,3)-(1,2)-(1,1)-(1,0), the line would cross 3 more routers (2.1 us at the 711 ns of a 1D hop) "
    "and its busiest link, (1,2) to (1,3), would carry 11 slices one way (the forward line's 7 and the 4 of "
    "devices 4-7 going back to device 3) where a line of neighbours carries 7: with the model's bandwidth and ramp "
    "terms {est} us ({err}); not taken while the route is not established"
)
MLA: dict[str, str] = {
    "flash_mla_reshard": (
        "Checked for stop 57, the figure's program (interleaved_to_sharded_program_factory.cpp and "
        "reader_unary_sharded_blocks_interleaved_start_id.cpp at 3ae31814d8): its reader runs on every core of the "
        "shard grid (64) with num_units_per_shard_height_last 1, so each reads a whole 18-tile shard, readers 16 "
        "to 63 reading pages 288 to 1151 of a 288-page input, waiting every 4 reads (num_readers 64).  L1 buffers "
        "are allocated from the top down (buffer.cpp: bottom_up defaults to DRAM buffers only), so the input, the "
        "test's first L1 buffer, holds the top 5 pages of each of the 70 banks, and the reads of pages 350 and up "
        "(802 of the 1152) address above it, beyond the banks' allocatable top: what those reads cost is measured "
        f"nowhere found.  {PAGE_TIMES}"
    ),
    "q_concat": f"{PAGE_TIMES}",
    "kv_rope_permute_post": f"{PAGE_TIMES}",
    "wq_kv_a_ag_decode": LINE_OF_TWO_ROWS.format(est="53.1", err="+11%"),
    "wo_ag_decode": LINE_OF_TWO_ROWS.format(est="52.1", err="+4%"),
}
"""Stop 57's checks of the MLA figures outside the claim, by step."""

"""``ttnn.experimental.deepseek.moe`` / ``.mla``: DeepSeek-V3's fused decode ops (tt-metal 2026-06),
a module per op: the MoE gate over one 16x16 face a core (``deepseek_moe_gate``), the gate's
projection and routing on Wormhole's 12 DRAM-bank cores (``moe_gate_mm``) and MLA's output
projection on the same ring (``matmul_wo``).  Their shared checks and shard reads live in
:mod:`~meshnn.ops.deepseek_decode.shards`."""

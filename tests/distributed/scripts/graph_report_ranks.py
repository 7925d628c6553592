"""Graph report files on several ranks merged into one database (tt-metal's multi-host graph-report
test, on a mesh shared by the ranks): every rank captures the same ops on its rows of a 2x4 mesh,
writes graph_capture_<rank+1>_of_<world>.json into argv[1], and rank 0 imports the folder."""

import sqlite3
import sys
from pathlib import Path

import torch

import meshnn as ttnn

folder = Path(sys.argv[1])
mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
rank, world = int(ttnn.distributed_context_get_rank()), int(ttnn.distributed_context_get_size())
torch.manual_seed(0)
values = torch.rand(1, 1, 64, 128).bfloat16()
host = ttnn.from_torch(
    values, layout=ttnn.TILE_LAYOUT, dtype=ttnn.bfloat16,
    mesh_mapper=ttnn.ShardTensor2dMesh(mesh, mesh_shape=(2, 4), dims=(2, 3)),
)  # fmt: skip
ttnn.graph.enable_detailed_buffer_tracing()
ttnn.graph.begin_graph_capture(ttnn.graph.RunMode.NORMAL)
try:
    x = ttnn.to_device(host, mesh, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    y = ttnn.gelu(ttnn.add(ttnn.mul(x, 2.0), x), memory_config=ttnn.L1_MEMORY_CONFIG)
    gathered = ttnn.all_gather(y, 2, cluster_axis=0, topology=ttnn.Topology.Linear)  # across the ranks' rows
finally:
    ttnn.graph.end_graph_capture_to_file(str(folder / f"graph_capture_{rank + 1}_of_{world}.json"))
    ttnn.graph.disable_detailed_buffer_tracing()
ttnn.distributed_context_barrier()
if rank == 0:
    ttnn.graph_report.import_report(folder, folder)
ttnn.distributed_context_barrier()
composer = ttnn.ConcatMesh2dToTensor(mesh, mesh_shape=(2, 4), dims=(0, 3))
expected = torch.nn.functional.gelu(3.0 * values.float())
got = ttnn.to_torch(gathered, mesh_composer=composer).float()
assert torch.allclose(got[:1], expected, rtol=0.05, atol=0.02) and torch.equal(got[0], got[1]), "wrong gather"
if rank == 0:
    cursor = sqlite3.connect(folder / "db.sqlite").cursor()
    assert cursor.execute("SELECT value FROM report_metadata WHERE key='world_size'").fetchone()[0] == str(world)
    rows = cursor.execute("SELECT rank, name FROM operations").fetchall()
    for r in range(world):
        names = {name for rr, name in rows if rr == r}
        missing = {"ttnn.to_device", "ttnn.multiply", "ttnn.add", "ttnn.gelu", "ttnn.all_gather"} - names
        assert not missing, f"rank {r} lacks {missing}: {names}"
    for table in ("tensors", "buffers", "buffer_chunks", "devices"):
        counts = dict(cursor.execute(f"SELECT rank, count(*) FROM {table} GROUP BY rank").fetchall())
        assert sorted(counts) == list(range(world)) and min(counts.values()) > 0, (table, counts)
    for r in range(world):
        assert (folder / f"cluster_descriptor_{r + 1}_of_{world}.yaml").exists()
print(f"OK rank {rank}: graph report of {world} ranks merged")
mesh.close()

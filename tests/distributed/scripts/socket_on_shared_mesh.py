"""Under plain mpiexec the ranks share one mesh: MeshSocket between ranks is refused on it (each
rank's end would allocate on its own, breaking lock-step allocation)."""

import meshnn as ttnn

mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
rank = mesh.context.rank
core = ttnn.CoreCoord(0, 0)
links = [ttnn.SocketConnection(ttnn.MeshCoreCoord(c, core), ttnn.MeshCoreCoord(c, core)) for c in mesh.local_coords()]
config = ttnn.SocketConfig(links, ttnn.SocketMemoryConfig(ttnn.BufferType.L1, 4096), 0, 1)
before = mesh.get_memory_view(ttnn.BufferType.L1)
try:
    ttnn.MeshSocket(mesh, config)
except ttnn.MeshnnValueError as error:
    assert "shared by the MPI ranks" in str(error), error
    assert mesh.get_memory_view(ttnn.BufferType.L1) == before
    print(f"OK rank {rank}: refused")
mesh.close()

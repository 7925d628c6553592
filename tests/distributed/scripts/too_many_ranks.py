import meshnn as ttnn

ttnn.open_mesh_device(ttnn.MeshShape(2, 4), system="t3k")
print("UNREACHABLE")

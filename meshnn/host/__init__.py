"""The host layer: the host's worker-thread pool and the work split over it (parallel copies,
conversions handed out chunk by chunk), the bound on every wait of meshnn's threads, the host's
memory (``memory.py``) and meshnn's settings from the environment, each checked (``settings.py``).

It knows nothing of devices, meshes or byte formats; it may import only ``meshnn.errors``.  The
layers above it (formats, mesh, tensor, ops) use it to spread host work over the CPUs.
"""

"""ONE chip: its arch figures, bank allocators and free lists, buffers and cores.

Layers: the device layer imports only :mod:`meshnn.errors`.
"""

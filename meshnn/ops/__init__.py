"""Computation launched as MeshWorkloads: element-wise, matmul, normalisation, reductions, data
movement and collectives."""

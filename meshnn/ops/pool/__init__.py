"""Pooling and resampling as ttnn has them: ``max_pool2d`` / ``avg_pool2d``, the adaptive pools,
``global_avg_pool2d``, ``upsample`` and ``grid_sample`` (with ``prepare_grid_sample_grid``).
Each module declares its ops in the registry; :mod:`meshnn.ops.catalog` imports them."""

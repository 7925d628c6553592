"""Typed tensor data: dtypes, byte formats, layouts, specs, storage and the Tensor class."""

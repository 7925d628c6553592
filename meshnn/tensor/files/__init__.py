"""Tensor files: the format (:mod:`.format`), ``dump_tensor`` (:mod:`.writer`), ``load_tensor``
(:mod:`.reader`) and the weight cache ``as_tensor`` (:mod:`.cache`).

Layer: tensor.  Its modules import errors, device, mesh, the byte formats and the tensor modules.
"""

"""Normalisations, by what they hold:

- :mod:`~meshnn.ops.norm.softmax`: ``ttnn.softmax`` and its in-place, scaled and masked forms;
- :mod:`~meshnn.ops.norm.softmax_config`: the softmax program configs;
- :mod:`~meshnn.ops.norm.group_norm`: ``ttnn.group_norm``;
- :mod:`~meshnn.ops.norm.group_norm_params`: the host helpers that lay out group norm's weights,
  masks and reciprocals (``ttnn.create_group_norm_input_mask`` ...);
- :mod:`~meshnn.ops.norm.batch_norm`: ``ttnn.batch_norm`` (training and running statistics).

``ttnn.layer_norm`` / ``rms_norm`` are in :mod:`meshnn.ops.normalization`, their distributed
forms in :mod:`meshnn.ops.distributed_norm`.

May import (each module): every layer below the ops and the ops' launch, checks, outputs, values
and config modules.
"""

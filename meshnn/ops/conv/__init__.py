"""Convolutions as ttnn has them: ``conv2d`` / ``conv1d`` / ``conv_transpose2d`` /
``experimental.conv3d``, the weight and bias preparation ops, their configs, and the CNN data
movement op ``fold`` (``experimental.convert_to_chw`` is data movement's:
:mod:`meshnn.ops.movement.cnn`).  Each module declares its ops in the registry;
:mod:`meshnn.ops.catalog` imports them."""

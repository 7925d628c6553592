"""``tt_lib.fused_ops``: the older fused host compositions (``softmax``)."""

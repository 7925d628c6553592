"""``tt_lib._internal``: ``comparison_funcs``."""

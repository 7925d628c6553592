"""``import ttnn`` answered by meshnn: the module alias used by ``meshnn run`` and the pytest plugin."""

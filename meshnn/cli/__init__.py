"""The ``meshnn`` command: info, demo, memory, run, perf, plan."""

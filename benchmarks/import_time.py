"""How long ``python -c 'import meshnn'`` takes, beside ``python -c 'import numpy'`` (which meshnn
imports) and an empty ``python -c pass``, measured in the same run in turns (a process of each per
round), each figure the best and the median of ROUNDS rounds, wall time from start to exit.

The aim is ``import meshnn`` under 0.3 s on the 2-core development machine.  Bytecode caches are
used as an installed package uses them (``PYTHONDONTWRITEBYTECODE`` is dropped for the children,
and one warm-up import writes them).  Prints a table, then one JSON line.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

ROUNDS = 15
AIM_S = 0.3
CASES = {"python -c pass": "pass", "import numpy": "import numpy", "import meshnn": "import meshnn"}


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",) and "TTNN_CONFIG" not in k}


def once(code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    env = environment()
    once("import meshnn", env)  # writes the bytecode caches
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(ROUNDS):
        for name, code in CASES.items():
            times[name].append(once(code, env))
    best = {name: min(t) for name, t in times.items()}
    median = {name: statistics.median(t) for name, t in times.items()}
    print(f"{'case':16} {'best of ' + str(ROUNDS):>12} {'median':>10}")
    for name, seconds in best.items():
        print(f"{name:16} {seconds:10.3f} s {median[name]:8.3f} s")
    over = best["import meshnn"] - best["import numpy"]
    met = best["import meshnn"] < AIM_S
    print(f"meshnn over numpy: {over:.3f} s; aim: import meshnn under {AIM_S} s: {'met' if met else 'missed'}")
    figures = {name.replace(" ", "_").replace("-", ""): round(s, 4) for name, s in best.items()}
    figures |= {f"{name.replace(' ', '_').replace('-', '')}_median": round(s, 4) for name, s in median.items()}
    print(json.dumps({"benchmark": "import_time", **figures, "aim_s": AIM_S, "met": met}))


if __name__ == "__main__":
    main()

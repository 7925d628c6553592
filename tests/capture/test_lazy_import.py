"""``import meshnn`` leaves the capture code (``ttnn.graph``, ``ttnn.CONFIG`` and the report writer)
unimported until it is used; a report asked for through ``$TTNN_CONFIG_OVERRIDES`` still starts at
import, as in ttnn.  (How long the import takes is measured in ``benchmarks/import_time.py``.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys

CAPTURE_MODULES = "sorted(m for m in sys.modules if m.startswith('meshnn.capture') or m == 'sqlite3')"


def run(code: str, **env: str) -> list[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TTNN_CONFIG")} | env
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=environ)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_import_meshnn_does_not_import_the_capture_code():
    code = (
        "import sys, meshnn\n"
        f"print({CAPTURE_MODULES})\n"
        "print(meshnn.CONFIG.enable_logging, callable(meshnn.graph.begin_graph_capture), 'graph' in dir(meshnn))\n"
        f"print('meshnn.capture.config' in {CAPTURE_MODULES})\n"
    )
    assert run(code) == ["[]", "False True True", "True"]


def test_a_report_asked_for_in_the_environment_starts_at_import(tmp_path):
    overrides = {"enable_fast_runtime_mode": False, "enable_logging": True, "report_name": "env"}
    overrides["root_report_path"] = str(tmp_path)
    code = "import meshnn\nfrom meshnn.capture.config import active_report\nprint(active_report() is not None)\n"
    assert run(code, TTNN_CONFIG_OVERRIDES=json.dumps(overrides)) == ["True"]

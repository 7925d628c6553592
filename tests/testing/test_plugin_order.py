"""``pytest -p meshnn.testing -p <a model's conftest>``: pytest imports the ``-p`` plugins in order before any
hook runs, so a plugin named after meshnn's that imports ttnn at its top finds the alias (tt-metal's model
directories' conftests do, loaded so under ``--noconftest``)."""

from __future__ import annotations

import os
import subprocess
import sys

from meshnn.testing import _named_on_the_command_line

PLUGIN = "import ttnn\n\nMESH_TYPE = ttnn.MeshDevice  # what a model's conftest reads at import\n"
TEST = "import ttnn\n\n\ndef test_the_alias():\n    assert ttnn.MeshDevice.__module__.startswith('meshnn')\n"


def test_a_plugin_named_after_meshnn_imports_the_alias(tmp_path):
    (tmp_path / "model_conftest_55.py").write_text(PLUGIN)
    (tmp_path / "test_alias_55.py").write_text(TEST)
    environment = {k: v for k, v in os.environ.items() if k not in ("MESHNN_AS_TTNN", "PYTHONPATH")}
    environment["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *sys.path])
    command = [sys.executable, "-m", "pytest", "-q", "-p", "meshnn.testing", "-p", "model_conftest_55"]
    done = subprocess.run(
        [*command, "--noconftest", "-p", "no:cacheprovider", "-o", "addopts=", str(tmp_path / "test_alias_55.py")],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout


def test_only_the_command_line_naming_the_plugin_aliases_at_import():
    assert _named_on_the_command_line(["-q", "-p", "meshnn.testing", "x.py"])
    assert _named_on_the_command_line(["-pmeshnn.testing"])
    assert not _named_on_the_command_line(["-q", "tests"])  # meshnn's own suite imports meshnn.testing's modules
    assert not _named_on_the_command_line(["-p", "meshnn.testing.planning"])
    assert not _named_on_the_command_line(["-p"])

"""A model's conftest loaded as a plugin after meshnn's (``pytest -p meshnn.testing -p
models.demos.X.conftest``) overrides meshnn's tt-metal fixtures, as a model directory's conftest
overrides tt-metal's root conftest: its ``mesh_device`` is the one a test gets (DeepSeek-V3's opens
the 4x8 Galaxy its tests are written for); fixtures it does not define stay meshnn's."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import meshnn


def test_a_model_conftest_plugin_overrides_meshnns_mesh_device(tmp_path):
    (tmp_path / "model_conftest.py").write_text(
        textwrap.dedent(
            """
            import pytest

            @pytest.fixture
            def mesh_device(device_params):
                import ttnn  # (aliased to meshnn by the time a fixture runs)

                mesh = ttnn.open_mesh_device(ttnn.MeshShape(4, 8))
                mesh.opened_by = "model"
                yield mesh
                ttnn.close_mesh_device(mesh)
            """
        )
    )
    (tmp_path / "test_model.py").write_text(
        textwrap.dedent(
            """
            def test_the_models_mesh(mesh_device, device_params):
                assert getattr(mesh_device, "opened_by", None) == "model"
                assert tuple(mesh_device.shape) == (4, 8)
                assert device_params == {}  # meshnn's device_params, which the model did not define
            """
        )
    )
    environment = {k: v for k, v in os.environ.items() if k not in ("MESHNN_SYSTEM", "MESHNN_AS_TTNN", "CI")}
    here = pathlib.Path(meshnn.__file__).resolve().parents[1]  # the meshnn under test, not the installed one
    environment["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(here), environment.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "meshnn.testing", "--noconftest", "-p", "model_conftest",
         "-p", "no:cacheprovider", "--system", "galaxy", str(tmp_path / "test_model.py")],
        capture_output=True, text=True, timeout=300, env=environment, cwd=tmp_path,
    )  # fmt: skip
    assert "1 passed" in done.stdout, done.stdout + done.stderr

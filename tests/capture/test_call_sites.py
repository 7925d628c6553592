"""Where a call came from in the user's code (meshnn.mesh.call_sites): the user's frames with
absolute paths, without meshnn's own, frozen or launcher frames, and the name a line assigns."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from meshnn.mesh.call_sites import CallSite, call_site, stack_trace, user_frames

from .reporting import rows
from .test_visualizer import MODEL, VISUALIZER_LABEL, meshnn_command


def test_frames_compiled_by_meshnn_are_not_the_users():
    generated: dict = {}
    exec(compile("def exp(f):\n    return f()\n", "<ttnn.exp>", "exec"), generated)  # as meshnn makes ops
    frames = generated["exp"](user_frames)
    assert frames[0].name == "test_frames_compiled_by_meshnn_are_not_the_users"
    assert not [f for f in frames if f.filename.startswith("<")]


def test_user_frames_are_innermost_first_with_absolute_paths():
    def inner():
        return user_frames(), call_site()

    frames, site = inner()
    assert frames[0].name == "inner" and frames[1].name.startswith("test_user_frames")
    assert all(Path(f.filename).is_absolute() and "<frozen" not in f.filename for f in frames)
    assert site == CallSite(__file__, frames[0].lineno) and site.short == f"test_call_sites.py:{frames[0].lineno}"
    text = stack_trace(frames[:1])
    assert text == f'  File "{__file__}", line {frames[0].lineno}, in inner\n    return user_frames(), call_site()\n'


@pytest.mark.parametrize(
    ("line", "assigned"),
    [
        ("    h = ttnn.rms_norm(x)\n", "h"),
        ("q, k = split(qkv)\n", "q, k"),
        ("x += ttnn.add(a, b)\n", "x"),
        ("self.cache[0] = ttnn.ones(shape)\n", "self.cache"),
        ("out: ttnn.Tensor = ttnn.exp(x)\n", None),  # annotated: not taken
        ("if a == ttnn.exp(x):\n", None),
        ("return ttnn.add(a, b)\n", None),
        ("ttnn.deallocate(x)\n", None),
    ],
)
def test_the_name_a_line_assigns(tmp_path, line, assigned):
    source = tmp_path / "model.py"
    source.write_text("# first line\n" + line)
    assert CallSite(str(source), 2).assigned == assigned


def test_meshnn_run_with_a_relative_path_gives_clean_labels_for_every_op(tmp_path):
    """What the visualizer shows as an op's label, from the stack traces of `meshnn run viz_model.py`
    (the visualizer itself is started by test_visualizer.py where it is installed)."""
    shutil.copy(MODEL, tmp_path / MODEL.name)
    overrides = '{"enable_fast_runtime_mode": false, "enable_logging": true, "report_name": "labels", '
    overrides += '"root_report_path": "reports"}'
    env = {k: v for k, v in os.environ.items() if not k.startswith("TTNN_CONFIG")}
    env |= {"TTNN_CONFIG_OVERRIDES": overrides, "MESHNN_SYSTEM": "t3k"}
    result = subprocess.run(
        [*meshnn_command(), "run", MODEL.name], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    (report,) = (tmp_path / "reports").iterdir()
    source = MODEL.read_text().splitlines()
    traces = rows(report, "SELECT name, stack_trace FROM operations JOIN stack_traces USING (operation_id)")
    assert len(traces) == 17
    for name, trace in traces:
        found = VISUALIZER_LABEL.search(trace)
        assert found is not None and found.group(1) == MODEL.name, trace
        assert f"{name}(" in source[int(found.group(2)) - 1], (name, trace)
        assert re.search(r'File "(?!/)', trace) is None  # every path absolute

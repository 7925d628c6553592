"""tt-run (``ttnn.distributed.ttrun``): rank binding files, mesh graph descriptors, the mpirun
command, and real launches through the venv's MPICH where each rank opens its own mesh and ranks
pass tensors through sockets.  Every launch is bounded by a timeout (its processes killed past it).
Needs the mpi extra (mpi4py, mpich, click, pyyaml)."""

from __future__ import annotations

import os
import pathlib
import shutil
import sys
import time

import pytest

from tests.distributed.test_mpi import launch

click = pytest.importorskip("click")
yaml = pytest.importorskip("yaml")
pytest.importorskip("mpi4py")

from click.testing import CliRunner  # noqa: E402

import meshnn as ttnn  # noqa: E402
from meshnn.distributed import ttrun  # noqa: E402
from meshnn.distributed.binding import rank_binding  # noqa: E402
from meshnn.distributed.mesh_graph import read_mesh_graph  # noqa: E402
from meshnn.distributed.ttrun_mpi import to_launcher_dialect  # noqa: E402

SCRIPTS = pathlib.Path(__file__).parent / "scripts"
TT_RUN = shutil.which("tt-run", path=os.path.dirname(sys.executable))


def descriptor(path: pathlib.Path, meshes: int, dims: tuple[int, int], hosts: tuple[int, int] = (1, 1)) -> pathlib.Path:
    """An MGD 2.0 text file: ``meshes`` instances of one mesh of ``dims`` devices."""
    instances = "".join(f'  instances {{ mesh {{ mesh_descriptor: "M0" mesh_id: {i} }} }}\n' for i in range(meshes))
    path.write_text(
        "# a test descriptor\n"
        'mesh_descriptors {\n  name: "M0"\n  arch: WORMHOLE_B0\n'
        f"  device_topology {{ dims: [ {dims[0]}, {dims[1]} ] }}\n"
        f"  host_topology {{ dims: [ {hosts[0]}, {hosts[1]} ] }}\n  channels {{ count: 2 policy: RELAXED }}\n}}\n"
        f'graph_descriptors {{\n  name: "G0"\n  type: "FABRIC"\n{instances}}}\n'
        'top_level_instance { graph { graph_descriptor: "G0" graph_id: 0 } }\n'
    )
    return path


def binding_file(path: pathlib.Path, mgd: pathlib.Path, ranks: int, **extra: object) -> pathlib.Path:
    document = {
        "rank_bindings": [{"rank": r, "mesh_id": r} for r in range(ranks)],
        "mesh_graph_desc_path": str(mgd),
        **extra,
    }
    path.write_text(yaml.safe_dump(document))
    return path


# ------------------------------------------------------------------------------- no launch


def test_mesh_graph_descriptor_gives_each_mesh_its_shape(tmp_path):
    meshes = read_mesh_graph(descriptor(tmp_path / "m.textproto", 3, (2, 4), hosts=(2, 1)))
    assert sorted(meshes) == [0, 1, 2]
    assert meshes[1].device_shape == (2, 4) and meshes[1].host_ranks == 2
    assert meshes[1].host_part(1) == (1, 4)  # two host ranks split the rows
    with pytest.raises(ttnn.MeshnnValueError, match="TT_MESH_HOST_RANK=2"):
        meshes[1].host_part(2)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('mesh_descriptors { name: "M0" ', "never closed"),
        ('mesh_descriptors { name: "M0" device_topology { dims: [ 0, 2 ] } }', "positive ints"),
        ('graph_descriptors { instances { mesh { mesh_descriptor: "X" mesh_id: 0 } } }', "names no known mesh"),
        ("", "no mesh instances"),
    ],
)
def test_bad_mesh_graph_descriptors_are_named(tmp_path, text, match):
    path = tmp_path / "bad.textproto"
    path.write_text(text)
    with pytest.raises(ttnn.MeshnnValueError, match=match):
        read_mesh_graph(path)


def test_rank_binding_from_the_environment(tmp_path, monkeypatch):
    mgd = descriptor(tmp_path / "m.textproto", 2, (2, 2))
    monkeypatch.delenv("TT_MESH_ID", raising=False)
    assert rank_binding() is None  # plain mpiexec: the shared mesh, unchanged
    monkeypatch.setenv("TT_MESH_ID", "1")
    monkeypatch.setenv("TT_MESH_GRAPH_DESC_PATH", str(mgd))
    bound = rank_binding()
    assert (bound.mesh_id, bound.shape) == (1, (2, 2))
    mesh = ttnn.open_mesh_device()  # the bound mesh's shape
    try:
        assert tuple(mesh.shape) == (2, 2) and mesh.all_local
    finally:
        ttnn.close_mesh_device(mesh)
    with pytest.raises(ttnn.MeshnnValueError, match="does not fit in this rank's mesh 1"):
        ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
    descriptor(mgd, 1, (2, 4), hosts=(1, 2))  # split along columns: not how meshnn shares a mesh
    monkeypatch.setenv("TT_MESH_ID", "0")
    with pytest.raises(ttnn.NotImplementedByMeshnn, match=r"host_topology \[1, 2\]"):
        ttnn.open_mesh_device()
    monkeypatch.setenv("TT_MESH_ID", "5")
    with pytest.raises(ttnn.MeshnnValueError, match="names no mesh"):
        ttnn.open_mesh_device()
    monkeypatch.setenv("TT_MESH_ID", "one")
    with pytest.raises(ttnn.MeshnnValueError, match="non-negative integer"):
        ttnn.open_mesh_device()


@pytest.mark.parametrize(
    ("document", "match"),
    [
        ({"rank_bindings": [{"rank": 0, "mesh_id": 0}, {"rank": 0, "mesh_id": 1}]}, "Duplicate ranks"),
        ({"rank_bindings": [{"rank": 0, "mesh_id": 0}, {"rank": 2, "mesh_id": 1}]}, "contiguous from 0"),
        ({"rank_bindings": []}, "non-empty list"),
        ({"rank_bindings": [{"rank": -1, "mesh_id": 0}]}, r"rank must be an int >= 0"),
        ({"rank_bindings": [{"rank": 0}]}, "mesh_id is required"),
        ({"rank_bindings": [{"rank": 0, "mesh_id": 0, "env": {}}]}, "unknown field"),
        ({"rank_bindings": [{"rank": 0, "mesh_id": 0, "env_overrides": {"A": [1]}}]}, "must be a string"),
        ({"rank_bindings": [{"rank": 0, "mesh_id": 0}], "global_env": ["A=1"]}, "global_env must be a mapping"),
    ],
)
def test_bad_rank_binding_files_are_named(tmp_path, document, match):
    mgd = descriptor(tmp_path / "m.textproto", 2, (1, 2))
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump({"mesh_graph_desc_path": str(mgd), **document}))
    with pytest.raises(ValueError, match=match):
        ttrun.parse_binding_config(path)


def test_missing_descriptor_is_named_unless_skipped(tmp_path):
    path = binding_file(tmp_path / "b.yaml", tmp_path / "absent.textproto", 1)
    with pytest.raises(ValueError, match="Mesh graph descriptor not found"):
        ttrun.parse_binding_config(path)
    assert ttrun.parse_binding_config(path, skip_mgd_check=True).mesh_graph_desc_path.name == "absent.textproto"


def test_each_rank_gets_its_environment_and_the_program_keeps_its_arguments(tmp_path):
    mgd = descriptor(tmp_path / "m.textproto", 2, (1, 2))
    path = binding_file(tmp_path / "b.yaml", mgd, 2, global_env={"G": "g"})
    config = ttrun.parse_binding_config(path)
    env = ttrun.get_rank_environment(config.rank_bindings[1], config)
    assert (env["TT_MESH_ID"], env["TT_RUN_RANK"], env["G"]) == ("1", "1", "g")
    assert env["TT_MESH_GRAPH_DESC_PATH"] == str(mgd)
    cmd = ttrun.build_mpi_command(config, ["pytest", "-x", "-np", "t.py"], ["--mca", "btl", "self"])
    assert cmd.count(":") == 1 and "--tag-output" in cmd and "-x" in cmd
    hydra, dropped = to_launcher_dialect(cmd)
    assert dropped == ["--mca btl self"]
    assert "-x" not in hydra[: hydra.index("pytest")] and hydra.count("-env") == cmd.count("-x") - 2
    first = hydra.index("pytest")
    assert hydra[first : first + 4] == ["pytest", "-x", "-np", "t.py"]  # the program's own arguments kept


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ([], "must be specified"),
        (["--rank-binding", "a.yaml", "--mesh-graph-descriptor", "m"], "mutually exclusive"),
        (["--mesh-graph-descriptor", "m"], "--hosts is required"),
        (["--mesh-graph-descriptor", "m", "--hosts", "a,a"], "Duplicate hostname"),
        (["--mesh-graph-descriptor", "m", "--hosts", "a,b c"], "no spaces"),
        (["--rank-binding", "absent.yaml"], "Configuration file not found"),
        (["--rank-bindings-mapping", "x.yaml"], "Rank bindings mapping file not found"),
        (["--rank-binding", "{binding}", "--mpi-args", "'unclosed"], "cannot split"),
        (["--rank-binding", "{binding}", "--rankfile-syntax", "bogus"], "bogus"),
        (["--rank-binding", "{binding}", "no-such-program-here"], "Program not found"),
    ],
)
def test_bad_command_lines_are_refused_before_anything_runs(tmp_path, args, match):
    path = binding_file(tmp_path / "b.yaml", descriptor(tmp_path / "m.textproto", 1, (1, 2)), 1)
    args = [a.replace("{binding}", str(path)) for a in args]
    result = CliRunner().invoke(ttrun.main, [*args, *([] if "no-such" in " ".join(args) else ["echo", "hi"])])
    assert result.exit_code != 0
    assert match.lower() in result.output.lower(), result.output


def test_dry_run_prints_both_commands_and_runs_nothing(tmp_path):
    path = binding_file(tmp_path / "b.yaml", descriptor(tmp_path / "m.textproto", 2, (1, 2)), 2)
    result = CliRunner().invoke(ttrun.main, ["--rank-binding", str(path), "--dry-run", "--tracy", "-r", "echo", "x"])
    assert result.exit_code == 0, result.output
    assert "-x TT_MESH_ID=1" in result.output and "-env TT_MESH_ID 1" in result.output
    assert "--tracy '-r' recorded" in result.output  # an option of the hardware: checked and reported


# ------------------------------------------------------------------------------- launches


def tt_run(args: list[str], cwd: pathlib.Path, timeout: float = 120, env: dict[str, str] | None = None):
    previous = os.getcwd()
    os.chdir(cwd)  # tt-run resolves relative paths, and writes Phase 1's cache, under its launch directory
    try:
        return launch([TT_RUN, *args], timeout, {"PYTHONPATH": str(pathlib.Path(__file__).parents[2])} | (env or {}))
    finally:
        os.chdir(previous)


needs_launcher = pytest.mark.skipif(TT_RUN is None, reason="tt-run is not installed (pip install -e '.[mpi]')")


@needs_launcher
@pytest.mark.parametrize(("ranks", "dims", "dtype"), [(2, (1, 2), "float32"), (3, (2, 2), "bfloat8_b")])
def test_each_rank_opens_its_own_mesh_and_sockets_carry_tensors_between_ranks(tmp_path, ranks, dims, dtype):
    mgd = descriptor(tmp_path / "m.textproto", ranks, dims)
    path = binding_file(tmp_path / "b.yaml", mgd, ranks)
    script = [sys.executable, str(SCRIPTS / "ttrun_pipeline.py"), f"{dims[0]}x{dims[1]}", dtype]
    result = tt_run(["--rank-binding", str(path), *script], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("OK rank") == ranks, result.stdout
    assert "recorded, not passed to mpiexec: --mca btl self,tcp" in result.stderr


@needs_launcher
def test_sends_do_not_wait_for_their_receives(tmp_path):
    path = binding_file(tmp_path / "b.yaml", descriptor(tmp_path / "m.textproto", 2, (1, 2)), 2)
    script = [sys.executable, str(SCRIPTS / "ttrun_exchange.py")]
    result = tt_run(["--rank-binding", str(path), *script], tmp_path, env={"MESHNN_WAIT_TIMEOUT": "30"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("exchanged 4 MiB each way") == 2, result.stdout
    began = time.monotonic()
    never = tt_run(["--rank-binding", str(path), *script, "never"], tmp_path, env={"MESHNN_WAIT_TIMEOUT": "2"})
    assert never.returncode != 0
    assert "never received from rank" in never.stdout + never.stderr
    assert time.monotonic() - began < 60


@needs_launcher
def test_a_big_mesh_over_host_ranks_is_shared_by_rows(tmp_path):
    mgd = descriptor(tmp_path / "m.textproto", 1, (2, 4), hosts=(2, 1))
    path = tmp_path / "b.yaml"
    ranks = [{"rank": r, "mesh_id": 0, "mesh_host_rank": r} for r in range(2)]
    path.write_text(yaml.safe_dump({"rank_bindings": ranks, "mesh_graph_desc_path": str(mgd)}))
    result = tt_run(["--rank-binding", str(path), sys.executable, str(SCRIPTS / "round_trip.py"), "2x4"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("holding 4 devices") == 2, result.stdout  # each rank: its row of the 2x4 mesh


@needs_launcher
def test_a_receive_whose_sender_never_sends_names_it_and_ends_the_job(tmp_path):
    path = binding_file(tmp_path / "b.yaml", descriptor(tmp_path / "m.textproto", 2, (1, 2)), 2)
    began = time.monotonic()
    script = [sys.executable, str(SCRIPTS / "ttrun_no_send.py")]
    result = tt_run(["--rank-binding", str(path), *script], tmp_path, env={"MESHNN_WAIT_TIMEOUT": "2"})
    assert result.returncode != 0
    assert "rank 0 never sent to rank 1 within 2 s" in result.stdout + result.stderr
    assert "was not stopped" not in result.stdout
    assert time.monotonic() - began < 60  # the sender sleeps 60 s: the receiver's timeout ended the job


@needs_launcher
def test_new_mode_makes_the_bindings_from_the_descriptor_then_runs_them(tmp_path):
    mgd = descriptor(tmp_path / "m.textproto", 2, (1, 2))
    script = [sys.executable, str(SCRIPTS / "ttrun_pipeline.py"), "1x2", "bfloat16"]
    result = tt_run(["--mesh-graph-descriptor", mgd.name, "--hosts", "localhost", "--bare", *script], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("OK rank") == 2, result.stdout
    (made,) = (tmp_path / "generated" / "ttrun").iterdir()
    document = yaml.safe_load((made / "rank_bindings.yaml").read_text())
    assert [b["mesh_id"] for b in document["rank_bindings"]] == [0, 1]
    again = tt_run(
        ["--mesh-graph-descriptor", mgd.name, "--hosts", "localhost", "--bare", "--dry-run", "true"], tmp_path
    )
    assert again.returncode == 0 and "Phase 1 cache hit" in again.stderr


def test_sub_context_overlays_merge_into_one_run(tmp_path):
    one = binding_file(tmp_path / "a.yaml", descriptor(tmp_path / "a.textproto", 2, (1, 2)), 2, global_env={"G": "1"})
    two = binding_file(tmp_path / "b.yaml", descriptor(tmp_path / "b.textproto", 1, (2, 2)), 1, global_env={"G": "1"})
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump({"subcontext_id_to_rank_bindings": {0: "a.yaml", 1: str(two)}}))
    config = ttrun.parse_rank_bindings_mapping(mapping)
    assert [(b.rank, b.mesh_id, b.subcontext_id) for b in config.rank_bindings] == [(0, 0, 0), (1, 1, 0), (2, 0, 1)]
    env = ttrun.get_rank_environment(config.rank_bindings[2], config)
    assert env["TT_MESH_GRAPH_DESC_PATH"].endswith("b.textproto") and env["TT_RUN_SUBCONTEXT_ID"] == "1"
    assert env["TT_RUN_SUBCONTEXT_SIZES"] == "2,1"
    binding_file(one, one.parent / "a.textproto", 2, global_env={"G": "2"})
    with pytest.raises(ValueError, match="global_env conflict"):
        ttrun.parse_rank_bindings_mapping(mapping)
    mapping.write_text(yaml.safe_dump({"subcontext_id_to_rank_bindings": {1: "a.yaml"}}))
    with pytest.raises(ValueError, match="keys must be 0, 1"):
        ttrun.parse_rank_bindings_mapping(mapping)


@needs_launcher
def test_sub_contexts_split_the_run_context(tmp_path):
    """tt-run with a rank-bindings mapping: each sub-context is the run's context of its ranks
    (tt-metal's split communicator); the world functions answer for the whole job."""
    binding_file(tmp_path / "a.yaml", descriptor(tmp_path / "a.textproto", 2, (1, 2)), 2)
    binding_file(tmp_path / "b.yaml", descriptor(tmp_path / "b.textproto", 1, (2, 2)), 1)
    mapping = tmp_path / "map.yaml"
    mapping.write_text(yaml.safe_dump({"subcontext_id_to_rank_bindings": {0: "a.yaml", 1: "b.yaml"}}))
    script = [sys.executable, str(SCRIPTS / "ttrun_subcontexts.py")]
    result = tt_run(["--rank-bindings-mapping", str(mapping), *script], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    for line in ("OK rank 0: sub-context 0, local rank 0", "OK rank 1: sub-context 0, local rank 1"):
        assert line in result.stdout, result.stdout
    assert "OK rank 2: sub-context 1, local rank 0" in result.stdout, result.stdout


@needs_launcher
def test_each_rank_sees_the_devices_its_binding_makes_visible(tmp_path):
    """env_overrides' TT_VISIBLE_DEVICES: each rank's system is the card of its PCIe device."""
    mgd = descriptor(tmp_path / "m.textproto", 2, (1, 2))
    ranks = [{"rank": r, "mesh_id": r, "env_overrides": {"TT_VISIBLE_DEVICES": str(r)}} for r in range(2)]
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump({"rank_bindings": ranks, "mesh_graph_desc_path": str(mgd)}))
    result = tt_run(["--rank-binding", str(path), sys.executable, str(SCRIPTS / "ttrun_visible.py")], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("sees 2 devices of PCIe device") == 2, result.stdout


def test_a_socket_between_ranks_on_a_shared_mesh_is_refused():
    from tests.distributed.test_mpi import mpirun, ok

    ok(mpirun(2, "socket_on_shared_mesh.py", timeout=120), 2)

"""Sweep files: validation errors name file, field, value and what is accepted; expansion order; ids."""
import os
import subprocess
import sys

import pytest

from netsim.errors import InputError
from netsim.sweep import expand, load_sweep, parse_sweep, point_id
from netsim.sweep.points import parse_builder

from sweep_scenario import write_sweep


def _spec(tmp_path, body):
    return load_sweep(write_sweep(tmp_path, body))


@pytest.mark.parametrize("body, field", [
    ("bogus: 1\n", "bogus"),
    ("grid:\n  set.buffer_bytes: []\n", "grid.set.buffer_bytes"),
    ("grid:\n  speed: [1, 2]\n", "grid.speed"),
    ("grid:\n  topology.hosts: [1, 2]\n", "grid.topology.hosts"),
    ("grid:\n  workload.tp: [1, 2]\n", "grid.workload.tp"),
    ("grid:\n  backend: [packet, warp]\n", "grid.backend"),
    ("grid:\n  seed: [1, -1]\n", "grid.seed"),
    ("grid:\n  set.buffer_bytes: [1, [2]]\n", "grid.set.buffer_bytes[1]"),
    ("zip:\n  set.a: [1, 2]\n  set.b: [1, 2, 3]\n", "zip"),
    ("grid:\n  cc: [none]\nzip:\n  cc: [dcqcn]\n", "zip.cc"),
    ("repetitions: 0\n", "repetitions"),
    ("iterations: 2\n", "iterations"),
])
def test_bad_sweep_files_name_the_field(tmp_path, body, field):
    with pytest.raises(InputError) as exc:
        expand(_spec(tmp_path, body))
    text = str(exc.value)
    assert text.startswith(str(tmp_path)) and f"field {field}:" in text and "\n" not in text


def test_bad_command_topology_and_files(tmp_path):
    path = write_sweep(tmp_path, "")
    with pytest.raises(InputError, match="field command"):
        parse_sweep({"command": "train", "topology": "dumbbell", "flows": "f.csv"}, path)
    with pytest.raises(InputError, match="field workload: command run needs a workload file"):
        parse_sweep({"command": "run", "topology": "dumbbell"}, path)
    with pytest.raises(InputError, match="field topology: unknown argument of builder dumbbell"):
        parse_sweep({"command": "flows", "topology": "dumbbell:hosts=3", "flows": "f.csv"}, path)
    with pytest.raises(InputError, match="field flows: file not found"):
        expand(parse_sweep({"command": "flows", "topology": "dumbbell", "flows": "missing.csv"}, path))
    with open(tmp_path / "broken.yaml", "w") as fh:
        fh.write("grid: [1, 2\n")
    with pytest.raises(InputError, match="broken.yaml: line"):
        load_sweep(str(tmp_path / "broken.yaml"))


def test_grid_zip_repetitions_order_and_command_lines(tmp_path):
    spec = _spec(tmp_path, """\
        set: {pfc: true}
        cc_param: {dcqcn: {rai_bps: 40Mbps}}
        seed: 7
        grid:
          topology.bottleneck_rate_bps: [25Gbps, 100Gbps]
          cc_param.dcqcn.g: [0.5, 0.25]
        zip:
          set.ecn_kmin_bytes: [5KB, 10KB, 20KB]
          set.ecn_kmax_bytes: [50KB, 100KB, 200KB]
        repetitions: 2
        """)
    points = expand(spec)
    assert len(points) == 2 * 2 * 3 * 2
    first, last = points[0].axes, points[-1].axes
    assert first == {"topology.bottleneck_rate_bps": "25Gbps", "cc_param.dcqcn.g": 0.5,
                     "set.ecn_kmin_bytes": "5KB", "set.ecn_kmax_bytes": "50KB", "repetition": 0, "seed": 7}
    assert last["topology.bottleneck_rate_bps"] == "100Gbps" and last["set.ecn_kmax_bytes"] == "200KB"
    assert [p.axes["seed"] for p in points[:2]] == [7, 8]
    assert [p.index for p in points] == list(range(len(points)))
    argv = points[1].argv
    assert argv[0] == "flows" and argv[1] == "dumbbell:n_left=4,n_right=1,bottleneck_rate_bps=25Gbps"
    assert argv[2] == os.path.join(str(tmp_path), "flows.csv")
    pairs = list(zip(argv, argv[1:]))
    assert ("--set", "pfc=true") in pairs and ("--set", "ecn_kmin_bytes=5KB") in pairs
    assert ("--cc-param", "dcqcn.g=0.5") in pairs and ("--cc-param", "dcqcn.rai_bps=40Mbps") in pairs
    assert ("--seed", "8") in pairs and ("--cc", "none") in pairs
    assert len({p.point_id for p in points}) == len(points)


def test_duplicate_points_are_rejected(tmp_path):
    with pytest.raises(InputError, match="identical parameters"):
        expand(_spec(tmp_path, "grid:\n  seed: [0, 1]\nrepetitions: 2\n"))


def test_point_id_is_stable_across_processes_and_key_order():
    params = {"command": "flows", "set": {"b": 2, "a": "10KB"}, "seed": 3}
    code = ("from netsim.sweep import point_id; "
            "print(point_id({'seed': 3, 'set': {'a': '10KB', 'b': 2}, 'command': 'flows'}))")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == point_id(params)
    assert point_id(params) != point_id({**params, "seed": 4})


def test_builder_yaml_file_can_vary_its_arguments(tmp_path):
    with open(tmp_path / "db.yaml", "w") as fh:
        fh.write("builder: dumbbell\nargs: {n_left: 4, n_right: 1}\n")
    source = write_sweep(tmp_path, "")
    spec = parse_sweep({"command": "flows", "topology": "db.yaml", "flows": "flows.csv",
                        "grid": {"topology.delay_ns": [500, 1000]}}, source)
    name, args = parse_builder(expand(spec)[1].argv[1])
    assert name == "dumbbell" and args == {"n_left": "4", "n_right": "1", "delay_ns": "1000"}
    mapping = parse_sweep({"command": "flows", "topology": {"builder": "dumbbell", "n_left": 4},
                           "flows": "flows.csv", "grid": {"topology.n_right": [1, 2]}}, source)
    assert [p.argv[1] for p in expand(mapping)] == ["dumbbell:n_left=4,n_right=1", "dumbbell:n_left=4,n_right=2"]


def test_a_non_finite_set_value_is_rejected_before_any_point_runs(tmp_path):
    # a grid value the run would reject (NaN) used to pass --dry-run and fail only when its point ran
    from netsim.sweep.spec import parse_sweep
    from netsim.errors import InputError
    import pytest as _pytest
    data = {"command": "flows", "topology": "leaf_spine:leaves=2,spines=1,hosts_per_leaf=2",
            "flows": str(tmp_path / "f.csv"), "backend": "packet", "grid": {"set.ecn_kmin_bytes": ["5KB", float("nan")]}}
    with _pytest.raises(InputError, match=r"grid\.set\.ecn_kmin_bytes\[1\].*nan"):
        parse_sweep(data, str(tmp_path / "s.yaml"))
    with _pytest.raises(InputError, match=r"set\.buffer_bytes.*-1"):
        parse_sweep(dict(data, grid={"seed": [1]}, set={"buffer_bytes": -1}), str(tmp_path / "s.yaml"))


def test_a_workload_axis_value_the_workload_rejects_fails_the_dry_run(tmp_path):
    # an unknown schedule on a workload axis used to pass --dry-run and fail only when its point ran
    import os as _os
    import pytest as _pytest
    from netsim.errors import InputError
    from netsim.sweep.points import expand
    from netsim.sweep.spec import parse_sweep
    root = _os.path.join(_os.path.dirname(__file__), "..", "..")
    data = {"command": "run", "topology": _os.path.join(root, "topologies", "leaf_spine_64gpu.yaml"),
            "workload": _os.path.join(root, "workloads", "gpt-3b-t1p4d8-small.yaml"), "backend": "analytic",
            "grid": {"workload.parallelism.schedule": ["1f1b", "zb_h2"]}}
    with _pytest.raises(InputError, match=r"point 1 is not a valid workload .*zb_h2"):
        expand(parse_sweep(data, str(tmp_path / "s.yaml")))
    data["grid"] = {"workload.parallelism.schedule": ["1f1b", "gpipe"]}
    assert len(expand(parse_sweep(data, str(tmp_path / "s.yaml")))) == 2

"""Parameter sweeps: many ``netsim flows`` / ``netsim run`` points on Dask, one results table.

>>> from netsim.sweep import parse_sweep, expand
>>> spec = parse_sweep({"command": "flows", "topology": "dumbbell:n_left=4", "flows": "f.csv",
...                     "grid": {"set.ecn_kmin_bytes": [5000, 10000], "cc": ["none", "dcqcn"]}}, "s.yaml")
>>> len(spec.axes), spec.repetitions
(2, 1)

Modules: :mod:`.spec` (sweep file validation), :mod:`.points` (expansion,
stable point ids, command lines), :mod:`.point` (one point in a worker),
:mod:`.table` (results table), :mod:`.runner` (Dask orchestration).
"""
from .point import run_point
from .points import Point, expand, point_id
from .runner import SweepResult, run_sweep
from .spec import SweepSpec, load_sweep, parse_sweep

__all__ = ["Point", "SweepResult", "SweepSpec", "expand", "load_sweep", "parse_sweep", "point_id",
           "run_point", "run_sweep"]

"""Fixtures of the sweep tests (scenario helpers live in sweep_scenario.py)."""
import pytest

from sweep_scenario import SIX_POINTS, write_sweep


@pytest.fixture(scope="session")
def six_point_reference(tmp_path_factory):
    """The six-point sweep run once on a LocalCluster of 2 worker processes."""
    from netsim.sweep import run_sweep

    folder = tmp_path_factory.mktemp("six")
    spec = write_sweep(folder, SIX_POINTS)
    res = run_sweep(spec, str(folder / "out"), workers=2)
    return spec, folder / "out", res

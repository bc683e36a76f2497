"""Execute the notebooks top to bottom (nbclient, kernel python3) so they cannot rot.

Each kernel starts in a temporary directory *outside* the checkout (as when
Jupyter is started anywhere else): the notebooks must find the shipped
topologies/ and workloads/ themselves, from the installed package. Outputs go
under that temporary directory (NETSIM_NB_OUT).
"""
import os
import re
import time

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NB_DIR = os.path.join(ROOT, "notebooks")
# notebook -> figures it draws (each must render as a PNG output)
NOTEBOOKS = {"01_training_step.ipynb": 3, "02_congestion_control.ipynb": 6, "03_fct_traces.ipynb": 2,
             "04_imported_jobs.ipynb": 1}
BUDGET_S = 120          # the limit per notebook


def _kernel_available() -> bool:
    try:
        from jupyter_client.kernelspec import KernelSpecManager
        return "python3" in KernelSpecManager().find_kernel_specs()
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.skipif(not _kernel_available(), reason="no python3 Jupyter kernel installed")
@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_notebook_runs(name, tmp_path, monkeypatch):
    path = os.path.join(NB_DIR, name)
    nb = nbformat.read(path, as_version=4)
    # stored without outputs, and no absolute paths in the sources
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    assert not any("/work/" in c.source or "/home/" in c.source for c in nb.cells)
    # no path relative to the working directory: shipped files are read under ROOT
    assert not [m for c in nb.cells if c.cell_type == "code"
                for m in re.findall(r"[\"'](?:topologies|workloads)/", c.source)]
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    assert os.path.commonpath([str(cwd.resolve()), ROOT]) != ROOT
    monkeypatch.delenv("NETSIM_ROOT", raising=False)
    # the kernel imports this checkout's netsim (as an editable install would), not one on its cwd
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("NETSIM_NB_OUT", str(tmp_path / "out"))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    client = nbclient.NotebookClient(nb, timeout=BUDGET_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(cwd)}})
    t0 = time.perf_counter()
    client.execute()
    wall = time.perf_counter() - t0
    assert wall < BUDGET_S, f"{name} took {wall:.0f} s"
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    images = sum(1 for c in nb.cells if c.cell_type == "code" for o in c.outputs
                 if "image/png" in o.get("data", {}))
    assert images == NOTEBOOKS[name], f"{images} figures rendered, expected {NOTEBOOKS[name]}"

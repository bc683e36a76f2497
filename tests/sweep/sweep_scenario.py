"""Shared scenario for the sweep tests: a 4-to-1 incast of 50 KB flows on a dumbbell builder."""
import os
import textwrap


def write_sweep(folder, body: str, name: str = "sweep.yaml", flow_bytes: int = 50_000) -> str:
    """Write flows.csv (4-to-1 incast) and a sweep file (``body`` is YAML appended to the base run)."""
    folder = str(folder)
    with open(os.path.join(folder, "flows.csv"), "w") as fh:
        fh.write("src,dst,size_bytes,start_ns\n" + "".join(f"left{i},right0,{flow_bytes},0\n" for i in range(4)))
    path = os.path.join(folder, name)
    with open(path, "w") as fh:
        fh.write(textwrap.dedent("""\
            command: flows
            topology: dumbbell:n_left=4,n_right=1
            flows: flows.csv
            cc: none
            """) + textwrap.dedent(body))
    return path


# Six points: two host rates x three bottleneck rates, all valid.
SIX_POINTS = """\
grid:
  topology.host_rate_bps: [50Gbps, 100Gbps]
  topology.bottleneck_rate_bps: [25Gbps, 50Gbps, 100Gbps]
"""




def read_table(path):
    """results.csv as (columns, rows of strings), wall-clock columns dropped."""
    import csv

    from netsim.sweep.table import is_wall_clock

    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        cols = [c for c in reader.fieldnames if not is_wall_clock(c)]
        rows = [{c: r[c] for c in cols} for r in reader]
    return cols, rows

"""Shared scenario for the sweep tests: a 4-to-1 incast of 50 KB flows on a dumbbell builder."""
import os
import textwrap

FLOWS_CSV = "src,dst,size_bytes,start_ns\n" + "".join(f"left{i},right0,50000,0\n" for i in range(4))


def write_sweep(folder, body: str, name: str = "sweep.yaml") -> str:
    """Write flows.csv and a sweep file (``body`` is YAML appended to the base run) into ``folder``."""
    folder = str(folder)
    with open(os.path.join(folder, "flows.csv"), "w") as fh:
        fh.write(FLOWS_CSV)
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




def _fake_main(argv):  # TEMPORARY stand-in until `netsim flows` exists
    import json
    import sys

    from netsim.params import ParamTable  # noqa: F401
    from netsim.units import parse_rate, parse_size
    from netsim.sweep.points import parse_builder

    out = argv[argv.index("--out") + 1]
    sets = dict(a.split("=", 1) for flag, a in zip(argv, argv[1:]) if flag == "--set")
    try:
        for v in sets.values():
            parse_size(v)
    except Exception as exc:
        print(f"netsim flows: error: --set: {exc}", file=sys.stderr)
        return 2
    _, args = parse_builder(argv[1])
    rate = parse_rate(args.get("bottleneck_rate_bps", args.get("host_rate_bps", "100Gbps")))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "summary.json"), "w") as fh:
        json.dump({"flows": 4, "fct": {"max_ns": 4 * 50000 * 8 / rate * 1e9}, "wall_time_s": 0.01}, fh)
    return 0


def point_main():
    """None (the real netsim.cli.main) once `netsim flows` exists, else the stand-in."""
    import netsim.cli
    names = netsim.cli.build_parser()._subparsers._group_actions[0].choices
    return None if "flows" in names else _fake_main


def read_table(path):
    """results.csv as (columns, rows of strings), wall-clock columns dropped."""
    import csv

    from netsim.sweep.table import is_wall_clock

    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        cols = [c for c in reader.fieldnames if not is_wall_clock(c)]
        rows = [{c: r[c] for c in cols} for r in reader]
    return cols, rows

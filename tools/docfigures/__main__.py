"""``python -m tools.docfigures [NAME ...] [--check]``: measure doc figures, write docs/figures/NAME.json.

With ``--check`` nothing is written: exit 1 listing every value that moved
beyond its tolerance and every phrase missing from its doc.
"""
from __future__ import annotations

import argparse
import sys

from . import SCRIPTS, differences, doc_text, load_record, load_script, normalize, record, write_record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.docfigures", description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", metavar="NAME", help=f"scripts to run (default all: {', '.join(SCRIPTS)})")
    ap.add_argument("--check", action="store_true", help="compare with docs/figures, write nothing")
    args = ap.parse_args(argv)
    bad = [n for n in args.names if n not in SCRIPTS]
    if bad:
        print(f"python -m tools.docfigures: error: unknown figure script {bad[0]!r}; expected one of "
              f"{', '.join(SCRIPTS)}", file=sys.stderr)
        return 2
    problems = []
    for name in args.names or SCRIPTS:
        values = load_script(name).measure()
        rec = record(name, values)
        if args.check:
            problems += differences(name, values, load_record(name))
        else:
            print(write_record(name, rec))
        for fig in rec["figures"]:
            if normalize(fig["text"]) not in doc_text(fig["doc"]):
                problems.append(f"{name}.{fig['id']}: {fig['doc']} does not say {fig['text']!r}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""Command-line entry point: ``netsim SUBCOMMAND ...``.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)``; argument parsing and file loading live here only.
Any :class:`~netsim.errors.NetsimError` becomes one line on stderr and exit
status 2 — never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from ..errors import EXIT_INPUT, NetsimError

SUBCOMMANDS = ("topo", "flows", "run", "defaults", "compare", "bench", "report", "sweep")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="netsim", description="Network simulator for distributed DNN training.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in SUBCOMMANDS:
        try:
            mod = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a subcommand not built yet
            if exc.name == f"{__name__}.{name}":
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        rc = args.func(args)
    except NetsimError as exc:
        print(f"netsim {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("netsim: interrupted", file=sys.stderr)
        return 130
    return int(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

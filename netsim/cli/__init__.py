"""Command-line entry point: ``netsim SUBCOMMAND ...``.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)``; argument parsing and file loading live here only.
Any :class:`~netsim.errors.NetsimError` becomes one line on stderr and exit
status 2 — never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from ..errors import EXIT_INPUT, NetsimError, hold_notes, release_notes

class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one stderr line and exit status 2."""

    #: the last error line printed (a refused run folder records it, :func:`main`)
    last_error = ""

    def error(self, message):  # noqa: D102 - argparse hook
        line = f"{self.prog}: error: {message} (see '{self.prog} --help')"
        OneLineParser.last_error = line
        self.exit(EXIT_INPUT, line + "\n")


#: subcommands whose ``--out`` is a run folder with the ``summary.json`` protocol (:mod:`netsim.runfiles`)
RUN_FOLDER_COMMANDS = ("run", "flows")

SUBCOMMANDS = ("topo", "flows", "run", "traffic", "defaults", "compare", "bench", "report", "sweep", "export")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``netsim`` parser with every subcommand, or with subcommand ``only`` alone.

    ``only``: :func:`main` passes the subcommand a command line starts with, so that ``netsim run ...``
    imports the module of ``run`` and not those of the others (``compare`` imports pandas, ``bench``
    the benchmarks). A subcommand's own parser, help and errors do not depend on the others.
    """
    parser = OneLineParser(prog="netsim", description="Network simulator for distributed DNN training.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in SUBCOMMANDS if only is None else (only,):
        try:
            mod = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a subcommand not built yet
            if exc.name == f"{__name__}.{name}":
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from ..runfiles import forget_prepared
    forget_prepared()                  # no run folder is this command's yet
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(only=words[0] if words and words[0] in SUBCOMMANDS else None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:          # a refused option: a run folder it names must not look whole
        if exc.code == EXIT_INPUT:
            _refused_folder(words, OneLineParser.last_error)
        raise
    hold_notes()  # notes (e.g. HPCC lines ignored) are printed only if the command succeeds
    ok = False
    try:
        rc = args.func(args)
        ok = True
    except NetsimError as exc:
        print(f"netsim {args.command}: error: {exc}", file=sys.stderr)
        if args.command in RUN_FOLDER_COMMANDS:   # the folder must not show an earlier run's results as this one's
            from ..runfiles import record_refusal
            record_refusal(getattr(args, "out", None), str(exc))
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("netsim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `netsim defaults | head -1`: the reader left, nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except OSError as exc:  # a path that is a directory, an existing file used as --out, no permission
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"netsim {args.command}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_INPUT
    finally:
        release_notes(show=ok)
    return int(rc or 0)


def _refused_folder(argv: list[str], line: str) -> None:
    """Record an argument refusal in the ``--out`` run folder of ``netsim run|flows ARGV`` (if it exists)."""
    if not argv or argv[0] not in RUN_FOLDER_COMMANDS:
        return
    out = None
    for i, a in enumerate(argv):
        if a == "--out" and i + 1 < len(argv):
            out = argv[i + 1]
        elif a.startswith("--out="):
            out = a[len("--out="):]
    from ..runfiles import record_refusal
    record_refusal(out, line)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

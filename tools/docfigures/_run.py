"""Run a netsim command in-process, as a user would type it, and read its outputs."""
from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import typing

import pandas as pd

from . import ROOT


class Outputs(typing.NamedTuple):
    """What one command wrote: its ``summary.json`` and, when written, ``fct.csv`` / ``cc.csv``."""

    summary: dict
    fct: pd.DataFrame | None
    cc: pd.DataFrame | None


def netsim(*argv: str) -> Outputs:
    """``netsim ARGV --out TMP --quiet --no-trace`` with paths relative to the repository root."""
    from netsim.cli import main
    with tempfile.TemporaryDirectory() as out:
        old = os.getcwd()
        os.chdir(ROOT)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
                status = main([*argv, "--out", out, "--quiet", "--no-trace"])
        finally:
            os.chdir(old)
        if status not in (0, None):
            raise RuntimeError(f"netsim {' '.join(argv)} exited {status}: {err.getvalue().strip()}")
        with open(os.path.join(out, "summary.json"), encoding="utf-8") as fh:
            summary = json.load(fh)
        tables = [pd.read_csv(os.path.join(out, f)) if os.path.exists(os.path.join(out, f)) else None
                  for f in ("fct.csv", "cc.csv")]
        return Outputs(summary, *tables)

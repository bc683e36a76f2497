"""Argument checks shared by ``netsim run`` and ``netsim flows``, made before anything is read or simulated.

* the positional files: a directory or a missing file is named by its
  argument (``TOPOLOGY``, ``WORKLOAD``, ``FLOWS``);
* ``--out`` must be a directory, new or existing (an existing regular file is
  named as the culprit, not reported as ``File exists``);
* options a backend cannot honour are errors, never silently ignored:
  the analytic backend has no congestion-control dynamics (its ``--cc`` only
  picks each flow's transport, RoCE or TCP), so ``--cc-param`` and
  ``--cc-params-file`` exit 2; ``--set`` keys go through
  :func:`netsim.honours.check_honoured` (the rule shared with the Python API),
  and on the flow backend ECN thresholds exit 2 too unless a flow runs DCQCN
  (its fluid DCQCN is the one model there that marks; dctcp, cubic, hpcc,
  swift and none read no threshold).

Each check raises :class:`~netsim.errors.InputError` (one line, exit 2).
"""
from __future__ import annotations

import argparse
import os

from ..backends import BUILTIN_BACKENDS as BACKENDS  # the shipped backends' names
from ..errors import InputError

from ..honours import ANALYTIC_HONOURS, FLOW_IGNORES, check_honoured  # noqa: F401  (re-exported)

#: largest ``--seed``: seeds are written to outputs (summary.json, repeats.csv, Parquet) as signed 64-bit integers
#: and numpy's SeedSequence takes only non-negative integers
SEED_MAX = 2**63 - 1


def seed_arg(text: str) -> int:
    """argparse ``type=`` of every ``--seed``: an integer 0..2**63-1 (argparse makes a bad one a one-line exit 2)."""
    try:
        seed = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r} (accepted: an integer 0..{SEED_MAX})") from None
    if not 0 <= seed <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"out of range: {seed} (accepted: an integer 0..{SEED_MAX}, "
                                         "numpy's SeedSequence takes no negative seed)")
    return seed


def check_out_dir(path: str, flag: str = "--out") -> None:
    """``--out DIR``: a directory that exists or can be created (not an existing file, not under one)."""
    p = os.path.abspath(os.path.expanduser(path))
    if os.path.exists(p) and not os.path.isdir(p):
        raise InputError("is an existing file, not a directory", where=f"{flag} {path}",
                         accepted="a directory for the run's outputs (new or existing)")
    parent = p
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise InputError(f"cannot create a directory under the file {parent}", where=f"{flag} {path}",
                         accepted="a directory path that is not below an existing file")


def check_out_file(path: str, flag: str = "--out") -> None:
    """``--out FILE``: a file that may be written — not a directory, in a directory that exists.

    A file output never creates folders (a typo in the folder would otherwise
    leave the file somewhere unexpected); ``--out DIR`` outputs do.
    """
    p = os.path.abspath(os.path.expanduser(path))
    if os.path.isdir(p):
        raise InputError("is a directory", where=f"{flag} {path}", accepted="a file name to write")
    parent = os.path.dirname(p)
    if not os.path.isdir(parent):
        what = "is a file, not a directory" if os.path.exists(parent) else "does not exist"
        raise InputError(f"its folder {parent} {what}", where=f"{flag} {path}",
                         accepted="a file in an existing directory (create the folder first)")


def check_input_file(path: str, arg: str, what: str, *, builder_ok: bool = False, noun: str = "file") -> None:
    """A positional input is a readable regular file (or, with ``builder_ok``, may be a builder expression)."""
    p = os.path.expanduser(path)
    if os.path.isdir(p):
        raise InputError("is a directory", where=f"{arg} {path}", accepted=what)
    if os.path.exists(p) and not os.path.isfile(p):
        raise InputError("is not a regular file", where=f"{arg} {path}", accepted=what)
    if not os.path.exists(p) and not builder_ok:
        raise InputError(f"{noun} not found", where=f"{arg} {path}", accepted=what)


def check_backend_options(args, *, command: str) -> None:
    """Reject what ``args.backend`` cannot honour (see module docstring)."""
    backend = args.backend
    if backend not in BACKENDS:
        return  # create_backend names the accepted backends
    _fast_forward_flag(args)
    _on_off_flag(args, "memo", "--memo")
    sets = {item.split("=", 1)[0].strip(): item.split("=", 1)[1] for item in args.set if "=" in item}
    if command != "flows":      # flows: once the file is read (a flow's cc column may be dcqcn)
        check_flow_ecn_args(args)
    check_honoured(backend, sets)
    if backend != "analytic":
        return
    why = "--backend analytic cannot honour it (no congestion-control dynamics; --cc only picks the transport)"
    if args.cc_param:
        raise InputError(why, where=f"--cc-param {args.cc_param[0]}",
                         accepted="no --cc-param with --backend analytic, or --backend packet or flow")
    if args.cc_params_file:
        raise InputError(why, where=f"--cc-params-file {args.cc_params_file}",
                         accepted="no --cc-params-file with --backend analytic, or --backend packet or flow")


def check_flow_ecn_args(args, flow_ccs=()) -> None:
    """``--set`` ECN thresholds on the flow backend need a DCQCN flow (``--cc`` or, for ``flows``,
    the flow file's ``cc`` column ``flow_ccs``): :func:`netsim.honours.check_flow_ecn`."""
    from ..honours import check_flow_ecn
    if args.backend != "flow":
        return
    sets = {item.split("=", 1)[0].strip(): item.split("=", 1)[1] for item in args.set if "=" in item}
    check_flow_ecn(sets, [getattr(args, "cc", None) or "none", *flow_ccs])


#: values of ``--fast-forward``
FAST_FORWARD_VALUES = ("on", "off")


def _fast_forward_flag(args) -> None:
    """``--fast-forward on|off``: a backend that does not declare the ability refuses ``on``
    (:func:`netsim.backends.base.check_flags`); ``on`` becomes ``--set fast_forward=on``."""
    _on_off_flag(args, "fast_forward", "--fast-forward")


def _on_off_flag(args, key: str, flag: str) -> None:
    """An ``on|off`` flag (``args.KEY``) of a declared ability: ``on`` becomes ``--set KEY=on``; a
    backend without the ability refuses it; ``--memo on`` with ``--fast-forward on`` is refused."""
    value = getattr(args, key, None)
    if value is None:
        return
    if value not in FAST_FORWARD_VALUES:
        raise InputError("bad value", where=flag, value=value, accepted="on or off")
    if value == "off":
        return
    from ..backends.base import check_flags
    check_flags(args.backend, [flag])
    if any(item.split("=", 1)[0].strip() == key for item in args.set):
        raise InputError("given twice", where=flag, value=value,
                         accepted=f"either {flag} or --set {key}, not both")
    if key == "memo" and getattr(args, "fast_forward", "off") == "on":
        raise InputError("cannot be combined with --fast-forward on", where=flag, value=value,
                         accepted="--memo on with --fast-forward off, or --memo off")
    args.set = list(args.set) + [f"{key}=on"]


def warn_if_incomplete(command: str, directory: str | os.PathLike, what: str) -> str:
    """Print ``netsim COMMAND: warning: DIR: incomplete: ...; WHAT`` on stderr for an incomplete run; its status."""
    import sys

    from ..analysis.io import COMPLETE, read_summary, run_status
    status = run_status(directory, read_summary(directory))
    if status != COMPLETE:
        print(f"netsim {command}: warning: {os.fspath(directory)}: {status}; {what}", file=sys.stderr)
    return status

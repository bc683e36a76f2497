"""Figures the README and docs state about netsim's behaviour, each produced by a script here.

A *figure script* is a module of this package with

* ``FIGURES``: a list of :class:`Figure` — an id, the doc file quoting it, and a
  ``template``: the literal phrase of the doc with ``{name:format}`` fields for
  the measured values (e.g. ``"mean FCT {fct_lo_ms:.2f}–{fct_hi_ms:.2f} ms"``);
* ``measure() -> dict[str, float]``: the values, computed by running netsim
  with the seed the script names (``SEED``);
* ``SLOW``: True when ``measure()`` takes more than a few seconds;
* optionally ``TOLERANCE`` ``{value name: relative tolerance}`` (default
  :data:`DEFAULT_REL_TOL`) for the rerun check.

``python -m tools.docfigures [NAME ...]`` runs the scripts and writes
``docs/figures/NAME.json`` (values, the rendered phrases, the command, seed and
date). Tests (``tests/test_docs_figures.py``) check that every rendered phrase
appears in its doc — so a doc edit cannot drift from the data — and rerun
each script against its JSON within the stated tolerance — so a change of a
default that moves a documented figure fails until the doc is regenerated.
Doc text is compared with runs of whitespace collapsed (docs wrap lines).

Speed figures move with the machine's load: the ``speed_*`` scripts state them
as CPU seconds, same-run ratios and counts, with loose tolerances (400 % for
CPU seconds, 100 % for ratios). Left out: figures of external references (RFC,
papers) — only netsim's own numbers are measured; the docs' remaining
wall-clock history is stated as "measured on DATE", not rechecked.
"""
from __future__ import annotations

import dataclasses
import datetime
import importlib
import json
import math
import os
import re

#: Repository root (this file is tools/docfigures/__init__.py).
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: Folder of the committed figure files.
FIGURE_DIR = os.path.join(ROOT, "docs", "figures")
#: Relative tolerance of a re-measured value unless a script says otherwise (1 %): the simulators
#: are deterministic for a seed, so a rerun on the same code gives the same value; a change of
#: model or default that moves a documented figure by more than 1 % fails until the doc is
#: regenerated, while one that moves it less leaves the doc right to its stated precision or so.
DEFAULT_REL_TOL = 0.01
#: The figure scripts, in the order ``python -m tools.docfigures`` runs them.
SCRIPTS = ("dcqcn_presets", "readme_validation", "lone_flow", "dctcp_band", "apnet_papers",
           "cubic_dumbbell", "nccl_busbw", "nccl_tuning", "sweep_kmin_kmax", "sweep_gpt_placement", "flow_ring256",
           "flow_vs_packet", "flow_vs_packet_steps", "cubic_region", "apnet_formula",
           "apnet_gpt3b_sim", "neuronabox", "holmes", "anthony",
           "apnet_scaling", "papers_packet", "packet_events",
           "flow_calibration", "flow_unseen",
           "flow_dcqcn_traces", "flow_port_fairness", "flow_dcqcn_calibration", "packet_incast_buffer",
           "flow_dcqcn_cost",
           "cc_fct_table",
           "hpcc_websearch",
           "hpcc_fattree",
           "cc_checks",
           "pfc_switch",
           "speed_tables",
           "speed_packet",
           "speed_cluster",
           "speed_cc_cost",
           "speed_flow_1024",
           "nvls_sim",
           "flow_fifo_wait",
           "timely_loop",
           "flow_pause_gate",
           "packet_fastforward",
           "innetwork_packet",
           "packet_fastforward_slow",
           "packet_memo",
           )


@dataclasses.dataclass(frozen=True)
class Figure:
    """One phrase of a doc that states measured values.

    Parameters
    ----------
    id : str
        Stable name of the figure within its script.
    doc : str
        The doc file quoting it, relative to the repository root.
    template : str
        The phrase as the doc states it, with ``str.format`` fields naming values of ``measure()``.
    """

    id: str
    doc: str
    template: str

    def render(self, values: dict) -> str:
        """The phrase with ``values`` filled in."""
        return self.template.format(**values)


def load_script(name: str):
    """The figure script module ``name`` (one of :data:`SCRIPTS`)."""
    if name not in SCRIPTS:
        raise ValueError(f"unknown figure script {name!r}; expected one of {', '.join(SCRIPTS)}")
    return importlib.import_module(f"{__name__}.{name}")


def json_path(name: str) -> str:
    """``docs/figures/NAME.json``."""
    return os.path.join(FIGURE_DIR, f"{name}.json")


def record(name: str, values: dict) -> dict:
    """The JSON record of script ``name`` for measured ``values``."""
    mod = load_script(name)
    bad = {k: v for k, v in values.items() if not (isinstance(v, (int, float)) and math.isfinite(v))}
    if bad:
        raise ValueError(f"{name}: non-finite or non-numeric values {bad}")
    return {
        "script": f"tools/docfigures/{name}.py",
        "command": f"python -m tools.docfigures {name}",
        "seed": mod.SEED,
        "measured_on": datetime.date.today().isoformat(),
        "values": {k: values[k] for k in sorted(values)},
        "tolerance": {k: tolerance(mod, k) for k in sorted(values)},
        "figures": [{"id": f.id, "doc": f.doc, "template": f.template, "text": f.render(values)}
                    for f in mod.FIGURES],
    }


def tolerance(mod, value_name: str) -> float:
    """Relative tolerance of ``value_name`` in script ``mod``."""
    return float(getattr(mod, "TOLERANCE", {}).get(value_name, DEFAULT_REL_TOL))


def load_record(name: str) -> dict:
    """The committed ``docs/figures/NAME.json``."""
    with open(json_path(name), encoding="utf-8") as fh:
        return json.load(fh)


def write_record(name: str, rec: dict) -> str:
    """Write ``rec`` as ``docs/figures/NAME.json`` (sorted keys, stable layout); return the path."""
    os.makedirs(FIGURE_DIR, exist_ok=True)
    path = json_path(name)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(rec, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    return path


def normalize(text: str) -> str:
    """``text`` with every run of whitespace made one space (docs wrap lines anywhere)."""
    return re.sub(r"\s+", " ", text).strip()


def doc_text(doc: str) -> str:
    """The normalized text of a doc file (relative to the repository root)."""
    with open(os.path.join(ROOT, doc), encoding="utf-8") as fh:
        return normalize(fh.read())


def differences(name: str, values: dict, rec: dict) -> list[str]:
    """Values of a rerun that differ from the record beyond their tolerance (empty = agree)."""
    out = []
    want = rec["values"]
    for key in sorted(set(want) | set(values)):
        if key not in values or key not in want:
            out.append(f"{name}.{key}: only in {'the record' if key in want else 'the rerun'}")
            continue
        tol = rec["tolerance"].get(key, DEFAULT_REL_TOL)
        a, b = float(values[key]), float(want[key])
        if not math.isfinite(a):
            out.append(f"{name}.{key}: measured {a!r}, not a finite number")
        elif abs(a - b) > tol * max(abs(b), 1e-300):
            out.append(f"{name}.{key}: measured {a!r}, docs/figures says {b!r} (rel. tolerance {tol:g})")
    return out

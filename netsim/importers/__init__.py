"""Importers: other tools' jobs and topologies mapped onto netsim's own model.

One module per format.  Workload importers return an
:class:`~netsim.importers.job.ImportedJob` (one iteration of netsim ops and a
placement) that ``run_training`` runs like a netsim workload:

* :mod:`.chakra` — MLCommons Chakra execution traces (``NAME.<rank>.et``),
  written back out by :mod:`.chakra_write`;
* :mod:`.simai` — SimAI/AICB workload ``.txt`` files (:mod:`.simai_build`);
* :mod:`.aicb_csv` — AICB's physical workload CSV.

:func:`detect_job` is the one dispatch point: it recognises a format from the
content (or takes ``workload_format``, :mod:`.sniff`) and returns ``None`` for
a netsim workload; :mod:`.load` runs the importer of any other format (each
imported only when its format is read).  See docs/formats.md.
"""
from __future__ import annotations

import os

from ..errors import InputError

#: workload formats ``--workload-format`` accepts
FORMATS = ("netsim", "chakra", "simai", "aicb-csv")


def detect_format(workload) -> str:
    """``chakra`` … or ``netsim`` for anything else (a YAML file, dict or Workload)."""
    if not isinstance(workload, (str, os.PathLike)):
        return "netsim"
    from .sniff import looks_aicb_csv, looks_chakra, looks_simai
    path = os.fspath(workload)
    if looks_chakra(path):
        return "chakra"
    if os.path.isfile(path) and looks_simai(path):
        return "simai"
    if os.path.isfile(path) and looks_aicb_csv(path):
        return "aicb-csv"
    return "netsim"


def _options(overrides) -> dict:
    """``--workload-set`` pairs an importer understands (``comm_groups``, ``peak_flops``, ``gpu_map``)."""
    if overrides is None:
        return {}
    pairs = overrides.items() if isinstance(overrides, dict) else overrides
    return {k: v for k, v in pairs}


def detect_job(workload, workload_format: str | None = None, *, overrides=None, graph=None):
    """The :class:`ImportedJob` for ``workload``, or ``None`` when it is a netsim workload.

    ``graph``: the topology, whose GPU count sizes a SimAI ``MICRO`` job (no ``all_gpus`` in its header).
    """
    fmt = workload_format or detect_format(workload)
    if fmt not in FORMATS:
        raise InputError("unknown workload format", where="--workload-format", value=fmt,
                         accepted=", ".join(FORMATS))
    if fmt == "netsim":
        return None
    if not isinstance(workload, (str, os.PathLike)):
        raise InputError("an imported workload must be a path", where="--workload-format", value=fmt,
                         accepted="a file or folder path")
    from .load import check_bounds, load
    job = load(fmt, os.fspath(workload), _options(overrides), graph)
    if not job.templates:   # nothing to simulate (a 0-byte collective, metadata only), as an empty workload
        raise InputError(f"no operation to simulate in this {fmt} workload", source=job.source, value=None,
                         accepted="at least one compute, collective or send of > 0 ns or bytes")
    check_bounds(job)
    return job

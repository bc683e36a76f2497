"""Field readers for the workload schema: typed getters with one-line errors.

Each getter reads one dotted field (``parallelism.dp``) and raises a
:class:`~netsim.errors.WorkloadError` naming the file, the line (when read from
YAML), the field, the bad value and what is accepted; unknown keys come with a
"did you mean" suggestion.
"""
from __future__ import annotations

import difflib
import math
import re

from ..errors import WorkloadError
from ..params import MAX_EXACT, parse_exact_size
from ..values import MAX_OP_NS
from ..units import UnitError, parse_time_ns

SECTIONS = ("name", "description", "model", "training", "parallelism", "placement", "collectives", "compute",
            "memory", "whatif", "variability", "overlap")
SECTION_KEYS = {
    "training": ("global_batch", "micro_batch", "precision", "recompute", "grad_bytes"),
    "parallelism": ("dp", "tp", "pp", "ep", "schedule", "partition", "scatter_gather", "overlap_p2p",
                    "bucket_bytes", "first_bucket_bytes", "zero_stage", "sequence_parallel",
                    "virtual_stages", "schedule_actions", "cp", "vocab_parallel", "embedding_grad_allreduce"),
    "placement": ("order", "gpus", "nic"),
    "collectives": ("tp", "dp", "pp", "ep"),
    "compute": ("gpu", "peak_flops", "utilization", "layer_times_ms", "optimizer", "optimizer_bytes_per_param"),
}
_FLOPS = re.compile(r"^\s*([0-9.eE+-]+)\s*([kKMGTP]?)\s*(?:flop/?s|flops)?\s*$", re.IGNORECASE)
#: largest peak FLOP/s accepted: 1 zettaFLOP/s, 10^5 x a 2024 GPU (H100 ~1e16 sparse FP8) (netsim choice)
MAX_FLOPS = 1e21
_SI = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def set_dotted(doc: dict, key: str, value, *, source: str) -> None:
    """Set ``a.b.c`` in nested dicts (creating sections), for ``--workload-set``."""
    parts = [p for p in str(key).split(".") if p]
    if not parts:
        raise WorkloadError("empty field name", source=source, where="--workload-set", value=key)
    cur = doc
    for i, p in enumerate(parts[:-1]):
        nxt = cur.get(p)
        if isinstance(nxt, str) and p == "model":   # model: gpt-3b shorthand
            nxt = {"preset": nxt}
            cur[p] = nxt
        if nxt is None:
            nxt = cur[p] = {}
        if not isinstance(nxt, dict):
            raise WorkloadError("is not a section", source=source, where=f"--workload-set {'.'.join(parts[:i + 1])}",
                                value=nxt)
        cur = nxt
    cur[parts[-1]] = value


class Fields:
    """Typed, located access to one workload document."""

    def __init__(self, doc: dict, source: str, lines: dict, overridden=()):
        self.doc, self.source, self.lines = doc, source, lines
        #: dotted fields set by ``--workload-set`` (their errors blame the flag, not the file)
        self.overridden = frozenset(overridden)

    def _set_by_flag(self, path: str) -> str | None:
        for key in self.overridden:
            if path == key or path.startswith(key + ".") or key.startswith(path + "."):
                return key
        return None

    def where(self, path: str) -> str:
        key = self._set_by_flag(path)
        if key is not None:
            return f"--workload-set {key}"
        line = self.lines.get(path)
        return f"line {line}, field {path}" if line else f"field {path}"

    def source_of(self, path: str) -> str | None:
        """The file to name for ``path`` (None when ``--workload-set`` gave it)."""
        return None if self._set_by_flag(path) is not None else self.source

    def fail(self, path: str, message: str, value=None, accepted: str | None = None, *, suggest=None):
        if suggest is not None and isinstance(value, str):
            close = difflib.get_close_matches(value, list(suggest), n=2)
            if close:
                accepted = (accepted + "; " if accepted else "") + f"did you mean {' or '.join(close)}?"
        raise WorkloadError(message, source=self.source_of(path), where=self.where(path), value=value,
                            accepted=accepted)

    def check_keys(self, prefix: str, d: dict, known) -> None:
        for k in d:
            if k not in known:
                path = f"{prefix}.{k}" if prefix else str(k)
                close = difflib.get_close_matches(str(k), list(known), n=2)
                hint = f"; did you mean {' or '.join(close)}?" if close else ""
                raise WorkloadError("unknown key", source=self.source_of(path), where=self.where(path), value=k,
                                    accepted="one of " + ", ".join(known) + hint)

    def section(self, doc: dict, name: str) -> dict:
        sec = doc.get(name)
        if sec is None:
            return {}
        if not isinstance(sec, dict):
            self.fail(name, "must be a mapping", sec, "keys " + ", ".join(SECTION_KEYS[name]))
        self.check_keys(name, sec, SECTION_KEYS[name])
        return sec

    @staticmethod
    def _key(path: str) -> str:
        return path.rsplit(".", 1)[-1]

    def _get(self, d: dict, path: str, default, required: bool):
        k = self._key(path)
        if k not in d or d[k] is None:
            if required:
                self.fail(path, "missing required field", None, None)
            return default, False
        return d[k], True

    def pos_int(self, d, path, default=None, required=False, minimum=1, maximum=MAX_EXACT) -> int:
        v, present = self._get(d, path, default, required)
        if not present:
            return v
        if isinstance(v, bool) or not isinstance(v, int) or not minimum <= v <= maximum:
            self.fail(path, "must be an integer" + (" >= 1" if minimum == 1 else " >= 0"), v,
                      f"an integer >= {minimum} and <= {'2^53' if maximum == MAX_EXACT else maximum}")
        return v

    def nonneg_int(self, d, path, default=None, required=False) -> int:
        return self.pos_int(d, path, default, required, minimum=0)

    def number(self, d, path, default, required=False) -> float:
        v, present = self._get(d, path, default, required)
        if not present:
            return v
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= MAX_EXACT:
            self.fail(path, "must be a non-negative finite number", v, "a number >= 0 and <= 2^53")
        return float(v)

    def fraction(self, d, path, default) -> float:
        v = self.number(d, path, default)
        if not 0 < v <= 1:
            self.fail(path, "must be in (0, 1]", v, "a utilization such as 0.4")
        return v

    def choice(self, d, path, choices, default) -> str:
        v, present = self._get(d, path, default, False)
        if present and str(v) not in choices:
            self.fail(path, "unknown value", v, "one of " + ", ".join(choices), suggest=choices)
        return str(v)

    def boolean(self, d, path, default=False) -> bool:
        v, present = self._get(d, path, default, False)
        if present and not isinstance(v, bool):
            self.fail(path, "must be true or false", v, "true or false")
        return v

    def size(self, d, path, default) -> int:
        v, present = self._get(d, path, default, False)
        if not present:
            return v
        try:
            out = parse_exact_size(v)
        except (UnitError, ValueError) as exc:
            reason = str(exc) if not isinstance(exc, UnitError) else "bad size"
            self.fail(path, reason, v, "a whole number of bytes such as 25MiB, 1MiB or 4096")
        if out > MAX_EXACT:
            self.fail(path, "size out of range", v, "at most 2^53 bytes")
        return out

    def duration(self, d, path) -> int:
        v = d.get(self._key(path))
        try:
            out = parse_time_ns(v, default_unit="ms")
        except UnitError:
            self.fail(path, "bad duration", v, "auto, none, or a duration such as 15ms")
        if out > MAX_OP_NS:
            self.fail(path, "duration out of range", v, "at most one day (86400s)")
        return out

    def flops(self, d, path, default) -> float:
        v, present = self._get(d, path, default, False)
        if not present:
            return float(v)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out = float(v) if math.isfinite(v) else -1.0
        else:
            m = _FLOPS.match(str(v))
            try:
                out = float(m.group(1)) * _SI[m.group(2)] if m else -1.0
            except ValueError:
                out = -1.0
        if not (math.isfinite(out) and 0 < out <= MAX_FLOPS):
            self.fail(path, "bad FLOP/s value", v, "a number > 0 and <= 1e21 or e.g. 125T, 312TFLOPS")
        return out

"""The ``model:`` field of a workload: transformer presets/dimensions (with MoE), CNN presets, layer lists.

Parsing only; the models themselves are :mod:`.transformer`, :mod:`.cnn` and
:mod:`.moe`.  Errors are one-line :class:`~netsim.errors.WorkloadError` s
through :class:`~netsim.workloads.fields.Fields`.
"""
from __future__ import annotations

from dataclasses import dataclass

from .cnn import CNN_PRESETS
from .fields import Fields
from .layers import Block, Layer
from .transformer import TRANSFORMER_PRESETS, TransformerModel


@dataclass(frozen=True)
class CnnModel:
    """A model given as a list of layers (CNN preset or explicit list)."""

    name: str
    layer_list: tuple
    source: str = ""
    family: str = "cnn"

    def params(self) -> int:
        return sum(l.params for l in self.layer_list)

    def build_layers(self, tp: int = 1, pp: int = 1, ep: int = 1) -> list[Layer]:
        return list(self.layer_list)

    def fwd_flops_per_sample(self) -> float:
        return sum(l.fwd_flops for l in self.layer_list)

    @property
    def layers(self) -> int:
        return len(self.layer_list)


def parse_model(f: Fields, m):
    """The ``model:`` field: a preset name, a transformer by dimensions (+ ``moe``), or a layer list."""
    if m is None:
        f.fail("model", "missing", None, "a preset name (" + ", ".join(list(TRANSFORMER_PRESETS) + list(CNN_PRESETS))
               + ") or a mapping")
    if isinstance(m, str):
        m = {"preset": m}
    if not isinstance(m, dict):
        f.fail("model", "must be a preset name or a mapping", m, "e.g. gpt-3b or {preset: gpt-3b, seq_len: 1024}")
    dims = ("layers", "hidden", "heads", "seq_len", "vocab", "ffn_hidden")
    f.check_keys("model", m, ("preset", "name", "family", "tied_embeddings", "layer_list", "moe") + dims)
    preset = m.get("preset")
    names = list(TRANSFORMER_PRESETS) + list(CNN_PRESETS)
    if preset is not None and preset not in names:
        f.fail("model.preset", "unknown model preset", preset, "one of " + ", ".join(names), suggest=names)
    if preset in CNN_PRESETS or "layer_list" in m:
        if preset in CNN_PRESETS:
            extra = [k for k in m if k not in ("preset", "name")]
            if extra:
                f.fail(f"model.{extra[0]}", "CNN presets take no dimensions", extra[0], "only preset and name")
            build, src = CNN_PRESETS[preset]
            return CnnModel(str(m.get("name", preset)), tuple(build()), src)
        extra = [k for k in m if k not in ("name", "layer_list")]
        if extra:   # a layer list is the whole model: a preset, transformer dimensions or moe would be ignored
            f.fail(f"model.{extra[0]}", "a layer_list model takes no preset, transformer dimension, family, "
                   "tied_embeddings or moe", m[extra[0]], "only name beside layer_list")
        return CnnModel(str(m.get("name", "custom")), _layer_list(f, m["layer_list"]), "user layer list")
    base = TRANSFORMER_PRESETS.get(preset)
    vals = {}
    for d in dims:
        if d in m:
            if d == "ffn_hidden" and m[d] == 0 and not isinstance(m[d], bool):   # 0 meant 4·hidden silently
                f.fail("model.ffn_hidden", "must be > 0", 0, "an integer >= 1, or omit it for 4·hidden")
            vals[d] = f.pos_int(m, f"model.{d}")
        elif base is None and d != "ffn_hidden":
            f.fail(f"model.{d}", "missing transformer dimension", None,
                   "layers, hidden, heads, seq_len and vocab, or a preset")
    if "tied_embeddings" in m:
        vals["tied_embeddings"] = f.boolean(m, "model.tied_embeddings")
    if "family" in m:
        vals["family"] = f.choice(m, "model.family", ("gpt", "bert"), "gpt")
    if "moe" in m:
        vals["moe"] = _moe(f, m["moe"])
    name = str(m.get("name") or preset or "transformer")
    model = base.with_dims(name=name, **vals) if base else TransformerModel(name=name, **vals)
    if model.hidden % model.heads:
        f.fail("model.heads", f"hidden {model.hidden} is not divisible by heads", model.heads, "a divisor of hidden")
    if model.moe is not None and model.moe.every > model.layers:   # layers every-1, 2*every-1, ...: none exists
        f.fail("model.moe.every", f"no MoE layer in the model's {model.layers} layers", model.moe.every,
               f"1..{model.layers} (layers every-1, 2*every-1, ... are MoE)")
    return model


MOE_KEYS = ("experts", "top_k", "capacity_factor", "every", "skew_start", "skew_end", "skew_decay_iterations")


def _moe(f: Fields, m):
    from .moe import MoeSpec
    if not isinstance(m, dict):
        f.fail("model.moe", "must be a mapping", m, "keys " + ", ".join(MOE_KEYS))
    f.check_keys("model.moe", m, MOE_KEYS)
    experts = f.pos_int(m, "model.moe.experts", required=True)
    top_k = f.pos_int(m, "model.moe.top_k", default=1)
    if top_k > experts:
        f.fail("model.moe.top_k", "top_k exceeds the number of experts", top_k, f"1..{experts}")
    cf = m.get("capacity_factor", 1.25)
    if cf is not None:
        cf = f.number(m, "model.moe.capacity_factor", 1.25)
        if cf <= 0:
            f.fail("model.moe.capacity_factor", "must be positive", cf, "e.g. 1.25, or null for no dropping")
    return MoeSpec(experts, top_k, cf, f.pos_int(m, "model.moe.every", default=2),
                   f.number(m, "model.moe.skew_start", 0.4), f.number(m, "model.moe.skew_end", 0.05),
                   f.number(m, "model.moe.skew_decay_iterations", 30.0) or 1e-9)


def _layer_list(f: Fields, items) -> tuple:
    if not isinstance(items, list) or not items:
        f.fail("model.layer_list", "must be a non-empty list", items,
               "items {name, params, fwd_flops[, out_elems]} (fwd_flops per sample)")
    out, seen = [], {}
    for i, it in enumerate(items):
        w = f"model.layer_list[{i}]"
        if not isinstance(it, dict):
            f.fail(w, "must be a mapping", it, "{name, params, fwd_flops[, out_elems]}")
        f.check_keys(w, it, ("name", "params", "fwd_flops", "out_elems"))
        p = f.nonneg_int(it, w + ".params", required=True)
        fl = f.number(it, w + ".fwd_flops", None, required=True)
        oe = f.nonneg_int(it, w + ".out_elems", default=0)
        nm = str(it.get("name", f"layer{i}"))
        if nm in seen:   # op names (F0.NAME.layer, ...) must be unique within an iteration
            f.fail(w + ".name", f"duplicate layer name (also model.layer_list[{seen[nm]}])", nm,
                   "a name no other layer of model.layer_list has")
        seen[nm] = i
        out.append(Layer(nm, (Block("layer", fl, 2 * fl, True, 0, ((nm, p),)),), oe))
    return tuple(out)

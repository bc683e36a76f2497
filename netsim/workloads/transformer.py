"""GPT/BERT-style transformer models: dimensions, presets, parameters, FLOPs.

Per layer (Megatron-LM, Narayanan et al. SC'21): attention (QKV, scores,
weighted values, output projection) and MLP (h → ffn → h), two LayerNorms;
parameters 12h² + 13h with ffn = 4h; forward FLOPs per sample
24·s·h² + 4·s²·h (matmuls only, 2 FLOPs per multiply-add); backward twice the
forward.  The embedding (word V·h + position s·h) sits on the first stage, the
logits (2·s·h·V forward, no recomputation) on the last; with tied embeddings
and p > 1 the last stage holds a copy of the word embedding (as Megatron does).
So N = 12lh²(1 + 13/(12h) + (V+s)/(12lh)) exactly for tied embeddings.

Tensor parallelism splits QKV/fc1 by columns and proj/fc2 by rows: a rank
holds (12h² + 7h)/t + 6h per layer (the row-parallel biases and LayerNorms are
replicated) and ceil(V/t)·h of the word embedding.  Two all-reduces of s·h
elements per sample follow the attention and MLP blocks.

The vocabulary-parallel embedding and cross-entropy all-reduces are added by
the op graph when the workload asks for them (``parallelism.vocab_parallel``,
:mod:`.gen_embedding`; off by default, as in the APNet'24 count).  MoE layers
with t > 1 split every expert over the TP group too (expert tensor
parallelism = TP): 2hf/t + f/t + h parameters and 4hf/t forward FLOPs per
routed token.

Left out: softmax/LayerNorm/GeLU FLOPs, vocabulary padding.

>>> m = TRANSFORMER_PRESETS["bert-large"]
>>> m.params()
334088192
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .layers import Block, Layer


@dataclass(frozen=True)
class TransformerModel:
    """A transformer by its dimensions (``ffn_hidden`` 0 means 4·hidden)."""

    name: str
    layers: int
    hidden: int
    heads: int
    seq_len: int
    vocab: int
    ffn_hidden: int = 0
    tied_embeddings: bool = True
    family: str = "gpt"
    source: str = ""
    moe: object = None             # MoeSpec: every moe.every-th layer's MLP is a mixture of experts

    @property
    def ffn(self) -> int:
        return self.ffn_hidden or 4 * self.hidden

    def params(self) -> int:
        """Total parameters N (Narayanan et al.'s count; exact for tied embeddings, ffn=4h)."""
        h, f = self.hidden, self.ffn
        per_layer = 4 * h * h + 4 * h + 2 * h * f + f + h + 4 * h
        emb = (self.vocab + self.seq_len) * h
        out = 0 if self.tied_embeddings else self.vocab * h
        total = self.layers * per_layer + emb + out
        if self.moe is not None:
            n_moe = sum(self.moe.is_moe_layer(i) for i in range(self.layers))
            mlp = 2 * h * f + f + h
            total += n_moe * ((self.moe.experts - 1) * mlp + h * self.moe.experts)   # experts + router
        return total

    def narayanan_params(self) -> float:
        """N ≈ 12lh²(1 + 13/(12h) + (V+s)/(12lh)) (Narayanan et al., SC'21)."""
        l, h = self.layers, self.hidden
        return 12 * l * h * h * (1 + 13 / (12 * h) + (self.vocab + self.seq_len) / (12 * l * h))

    def fwd_flops_per_sample(self) -> float:
        """Forward FLOPs of the whole model for one sample (layers + logits; MoE: top_k experts per token)."""
        s, h = self.seq_len, self.hidden
        k = [self.moe.top_k if (self.moe is not None and self.moe.is_moe_layer(i)) else 1 for i in range(self.layers)]
        return sum(8 * s * h * h + 4 * s * s * h + 4 * s * h * self.ffn * ki for ki in k) + 2 * s * h * self.vocab

    def build_layers(self, tp: int = 1, pp: int = 1, ep: int = 1) -> list[Layer]:
        """The per-rank :class:`Layer` list: embedding, ``layers`` bodies, logits.

        An MoE layer's MLP block holds E/ep experts (each TP-split) and a
        replicated router; its FLOPs are per routed token.
        """
        s, h, f, t = self.seq_len, self.hidden, self.ffn, tp
        word = math.ceil(self.vocab / t) * h
        out: list[Layer] = [Layer("embedding", (Block("embedding", 0.0, 0.0, False, 0,
                                                      (("word_embeddings", word), ("position_embeddings", s * h))),),
                                  s * h, "first")]
        attn_fwd = (8 * s * h * h + 4 * s * s * h) / t
        mlp_fwd = 4 * s * h * f / t
        for i in range(self.layers):
            attn = Block("attn", attn_fwd, 2 * attn_fwd, True, s * h if t > 1 else 0,
                         (("ln1", 2 * h), ("qkv.weight", 3 * h * h // t), ("qkv.bias", 3 * h // t),
                          ("proj.weight", h * h // t), ("proj.bias", h)))
            if self.moe is not None and self.moe.is_moe_layer(i):
                per_token = 4 * h * f // t       # expert tensor parallelism = TP: fc1 columns, fc2 rows
                mlp = Block("moe", per_token, 2 * per_token, True, 0,
                            (("ln2", 2 * h), ("router.weight", h * self.moe.experts)),
                            (("experts", self.moe.experts // ep * (2 * h * f // t + f // t + h)),), moe=True)
            else:
                mlp = Block("mlp", mlp_fwd, 2 * mlp_fwd, True, s * h if t > 1 else 0,
                            (("ln2", 2 * h), ("fc1.weight", h * f // t), ("fc1.bias", f // t),
                             ("fc2.weight", f * h // t), ("fc2.bias", h)))
            out.append(Layer(f"layer{i}", (attn, mlp), s * h))
        logit_fwd = 2 * s * h * self.vocab / t
        tensors = ()
        if not self.tied_embeddings:
            tensors = (("output.weight", word),)
        elif pp > 1:
            tensors = (("word_embeddings_copy", word),)
        out.append(Layer("logits", (Block("logits", logit_fwd, 2 * logit_fwd, False, 0, tensors),), 0, "last"))
        return out

    def with_dims(self, **dims) -> "TransformerModel":
        return replace(self, **dims)


_GPT2 = "Radford et al. 2019 (GPT-2)"
_GPT3 = "Brown et al. 2020, Table 2.1 (GPT-3)"
TRANSFORMER_PRESETS: dict[str, TransformerModel] = {m.name: m for m in (
    TransformerModel("gpt-125m", 12, 768, 12, 2048, 50257, source=_GPT3 + " Small"),
    TransformerModel("gpt-350m", 24, 1024, 16, 2048, 50257, source=_GPT3 + " Medium"),
    TransformerModel("gpt-760m", 24, 1536, 16, 2048, 50257, source=_GPT3 + " Large"),
    TransformerModel("gpt-1.3b", 24, 2048, 16, 2048, 50257, source=_GPT3 + " XL"),
    TransformerModel("gpt-1.5b", 48, 1600, 16, 1024, 50257,
                     source=_GPT2 + " XL, 1.5B; 16 heads as in DeepSpeedExamples' Megatron GPT-2 1.5B"),
    TransformerModel("gpt-3b", 32, 2560, 32, 2048, 50257, source=_GPT3 + " 2.7B (the '3B' class)"),
    TransformerModel("gpt-6.7b", 32, 4096, 32, 2048, 50257, source=_GPT3 + " 6.7B"),
    TransformerModel("bert-base", 12, 768, 12, 512, 30522, family="bert", source="Devlin et al. 2019 (BERT-base)"),
    TransformerModel("bert-large", 24, 1024, 16, 512, 30522, family="bert", source="Devlin et al. 2019 (BERT-large)"),
)}

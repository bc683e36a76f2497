"""Model sizes and FLOPs against the architectures' published counts."""
import pytest

from netsim.workloads import CNN_PRESETS, TRANSFORMER_PRESETS, load_workload


@pytest.mark.parametrize("name,params,gmacs", [
    ("resnet50", 25_557_032, 4.09),    # torchvision model zoo: params and GFLOPS (multiply-adds)
    ("resnet101", 44_549_160, 7.80),
    ("vgg16", 138_357_544, 15.47),
])
def test_cnn_true_counts(name, params, gmacs):
    layers = CNN_PRESETS[name][0]()
    assert sum(l.params for l in layers) == params
    assert sum(l.fwd_flops for l in layers) / 2e9 == pytest.approx(gmacs, rel=0.005)


def test_apnet_printed_sizes_are_mebi_counts():
    # APNet'24 prints 24.37M for ResNet50 and 131.95M for VGG16: counts in units of 2**20
    assert CNN_PRESETS["resnet50"][0] and round(25_557_032 / 2**20, 2) == 24.37
    assert round(sum(l.params for l in CNN_PRESETS["vgg16"][0]()) / 2**20, 2) == 131.95


@pytest.mark.parametrize("name", sorted(TRANSFORMER_PRESETS))
def test_transformer_params_match_narayanan(name):
    m = TRANSFORMER_PRESETS[name]
    assert m.params() == pytest.approx(m.narayanan_params(), rel=1e-12)
    layers = m.build_layers(1, 1)
    assert sum(l.params for l in layers) == m.params()


def test_bert_sizes_close_to_published():
    assert TRANSFORMER_PRESETS["bert-large"].params() == pytest.approx(335e6, rel=0.01)
    assert TRANSFORMER_PRESETS["bert-base"].params() == pytest.approx(109.5e6, rel=0.01)


@pytest.mark.parametrize("t", [1, 2, 4, 8])
def test_tp_shards_sum_to_model(t):
    m = TRANSFORMER_PRESETS["gpt-3b"]
    h = m.hidden
    per_rank = sum(l.params for l in m.build_layers(t, 1))
    replicated = m.layers * 6 * h + m.seq_len * h          # LayerNorms, row-parallel biases, positions
    pad = (-(-m.vocab // t) * t - m.vocab) * h                 # vocabulary rounded up to a multiple of t
    assert per_rank * t - (t - 1) * replicated - pad == m.params()


def test_training_flops_match_narayanan():
    m = TRANSFORMER_PRESETS["gpt-3b"]
    B, s, l, h, V = 8, m.seq_len, m.layers, m.hidden, m.vocab
    with_rc = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
    fwd = m.fwd_flops_per_sample() * B
    # forward + backward (2x) + recomputation of the layers (not the logits)
    logits = 2 * s * h * V * B
    assert 4 * fwd - logits == pytest.approx(with_rc, rel=1e-9)


def test_preset_with_dimension_overrides():
    w = load_workload({"model": {"preset": "gpt-3b", "layers": 4, "seq_len": 128},
                       "training": {"global_batch": 4}})
    assert (w.model.layers, w.model.hidden, w.model.seq_len) == (4, 2560, 128)

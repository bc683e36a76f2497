"""Rank classes of SimAI jobs (importers/simai_classes.py) and the 9,216-GPU example's generator."""
import os
import re

import pytest

from netsim.importers.simai import parse_rows
from netsim.importers.simai_build import class_job, make_job
from netsim.importers.simai_classes import class_dp, expand
from netsim.importers.simai_pipeline import split_blocks
from tools import simai_example

DATA = os.path.join(os.path.dirname(__file__), "data")


def _text(name: str, gpus: int, policy: str | None = None) -> str:
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        text = re.sub(r"all_gpus: \d+", f"all_gpus: {gpus}", f.read(), count=1)
    if policy is not None:
        text = policy + text[text.index(" "):]
    return text


def _explicit_and_lifted(text: str):
    h, rows, notes = parse_rows(text, "<test>")
    job = make_job("<test>", h, [dict(r) for r in rows], notes, None)
    cj = class_job("<test>", h, [dict(r) for r in rows])
    return job.templates, cj


@pytest.mark.parametrize("name,gpus,policy,blocks", [
    ("simai_workload_analytical.txt", 32, None, 2),        # tp 2, ep 2, pp 2, vpp 2: 1F1B interleaved, EP, DP_EP
    ("simai_workload_analytical.txt", 64, None, 4),
    ("simai_workload_ep_test.txt", 64, None, 2),           # tp 4, ep 4, pp 1
    ("simai_microAllReduce.txt", 64, None, 4),             # tp 8, ep 1
    ("simai_workload_analytical.txt", 8, "MICRO", 4),
    ("simai_workload_analytical.txt", 12, "DATA", 6),
])
def test_lifted_class_job_is_the_explicit_import_template_by_template(name, gpus, policy, blocks):
    explicit, cj = _explicit_and_lifted(_text(name, gpus, policy))
    assert cj.blocks == blocks
    assert len(cj) == len(explicit) and len(cj.templates) < len(explicit)
    lifted = list(expand(cj))
    assert lifted == explicit          # names, kinds, ranks in ring order, groups, sizes, deps: all equal


def test_class_job_needs_every_group_kind_with_two_members():
    assert class_dp(4, 2) is None         # dp = 2·ep: already the class job
    assert class_dp(8, 2) == 4
    assert class_dp(16, 16) is None       # SimAI example's 384-GPU cut: dp 16 = ep
    assert class_dp(384, 16) == 32        # the 9,216-GPU example: 12 blocks of 32 DP replicas
    assert class_dp(24, 16) is None       # 2·ep does not divide dp
    h, rows, _ = parse_rows(_text("simai_workload_analytical.txt", 8), "<test>")
    assert class_job("<test>", h, rows) is None


def test_generator_rebuilds_simai_example_row_structure():
    text = simai_example.text()
    assert len(text.encode()) == 140_399           # the byte count of aliyun/SimAI's file @ 03613a7
    h, rows, notes = parse_rows(text, "<example>")
    assert (h["policy"], h["tp"], h["ep"], h["pp"], h["vpp"], h["ga"], h["all_gpus"], h["pp_comm"]) == \
        ("HYBRID_TRANSFORMER_FWD_IN_BCKWD", 2, 16, 12, 8, 24, 9216, 251658240)
    assert len(rows) == 1789 and not notes
    head, blocks, tail = split_blocks(rows, h["ga"], "<example>")
    assert (len(head), len(blocks), len(tail)) == (6, 24, 7)
    assert {len(b) for b in blocks} == {74}
    assert [r["wg_compute"] for r in (blocks[0][0], blocks[1][0])] == [15091072, 875420]
    assert {r["update"] for r in rows} == {100}


def test_generator_refuses_a_cut_that_does_not_divide(tmp_path, capsys):
    assert simai_example.main([str(tmp_path / "w.txt"), "--all-gpus", "100"]) == 2
    err = capsys.readouterr().err
    assert "--all-gpus 100" in err and "accepted" in err and err.count("\n") == 1


@pytest.mark.slow
def test_lifted_9216_example_rows_equal_explicit_on_a_192_gpu_cut():
    """SimAI's example rows (pp 12, vpp 8, ga 24) on 192 GPUs with ep 2: 2,056,464 templates, ~55 s of CPU."""
    explicit, cj = _explicit_and_lifted(simai_example.text(192, ep=2))
    assert cj.blocks == 2 and len(explicit) == 2_056_464
    assert list(expand(cj)) == explicit

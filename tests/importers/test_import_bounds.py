"""Imported jobs are held to netsim's op bounds before the run (one day per op, 2^53 bytes)."""
import pytest

from netsim.errors import InputError
from netsim.importers.load import check_bounds as _check_bounds
from netsim.importers.job import ImportedJob, OpTemplate
from netsim.values import MAX_EXACT, MAX_OP_NS


def _job(kind="compute", **op):
    return ImportedJob("j", "trace.et", "chakra", 1, [OpTemplate("n7", kind, (0,), **op)])


def test_a_day_long_op_passes_and_one_ps_more_is_refused():
    _check_bounds(_job(duration_ps=MAX_OP_NS * 1000))
    with pytest.raises(InputError, match=r"trace.et: op n7: operation longer than one day \(got '86400000000000 ns'\)"):
        _check_bounds(_job(duration_ps=MAX_OP_NS * 1000 + 1))


def test_a_size_past_2p53_is_refused():
    _check_bounds(_job(kind="collective", size_bytes=MAX_EXACT))
    with pytest.raises(InputError, match=r"op n7: operation size out of range \(got 9007199254740993\)"):
        _check_bounds(_job(kind="collective", size_bytes=MAX_EXACT + 1))

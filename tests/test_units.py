import pytest

from netsim.errors import InputError
from netsim.params import Param, ParamTable, parse_assignments
from netsim.units import UnitError, parse_rate, parse_size, parse_time_ns, serialization_ps


def test_si_and_binary_units():
    assert parse_rate("100Gbps") == 1e11
    assert parse_rate("1.2Tbps") == 1.2e12
    assert parse_size("1MB") == 10**6
    assert parse_size("1MiB") == 2**20
    assert parse_size("32MB") == 32 * 10**6
    assert parse_time_ns("1us") == 1000
    assert parse_time_ns("0.5ms") == 500_000


@pytest.mark.parametrize("bad", ["10Gbsp", "fast", "", "1..2Gbps", "-5Gbps"])
def test_bad_rate(bad):
    with pytest.raises(UnitError):
        parse_rate(bad)


def test_serialization_exact():
    # 1500 B at 400 Gbps = 30 ns exactly
    assert serialization_ps(1500, 400e9) == 30_000


def test_param_table():
    t = ParamTable("x", [Param("buffer_bytes", 100, "size", "b", "s"), Param("pfc", True, "bool", "p", "s")])
    assert t.resolve({"buffer_bytes": "1KB", "pfc": "off"}) == {"buffer_bytes": 1000, "pfc": False}
    with pytest.raises(InputError, match="buffer_byte"):
        t.resolve({"buffer_byte": "1"})
    with pytest.raises(InputError):
        parse_assignments(["novalue"])

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


def test_exact_time_keeps_the_picosecond_for_a_bare_number_and_a_unit_string_alike():
    from netsim.units import parse_time_exact_ns
    assert parse_time_exact_ns("1.5ns") == parse_time_exact_ns(1.5) == 1.5
    assert parse_time_exact_ns("1.0005us") == 1000.5                   # parse_time_ns rounds it to 1000
    assert parse_time_exact_ns("1500ps") == 1.5 and parse_time_exact_ns("2us") == 2000
    assert type(parse_time_exact_ns("2us")) is int and parse_time_exact_ns(2**53) == 2**53
    assert parse_time_exact_ns("0ns") == 0
    for bad in ("0.4ps", 0.0004, "-1ns", -1):
        with pytest.raises(UnitError):
            parse_time_exact_ns(bad)


def test_a_whole_ns_param_refuses_a_positive_time_that_would_round_to_0():
    p = Param("min_rto_ns", 1000, "time", "t", "s")
    assert p.parse("1.5ns") == 2 and p.parse("0ns") == 0 and p.parse("0.5us") == 500
    with pytest.raises(InputError, match="below 0.5 ns would become 0"):
        p.parse("0.3ns", where="field min_rto_ns")

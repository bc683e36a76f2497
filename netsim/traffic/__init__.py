"""Background traffic: flow-size CDFs (:mod:`.cdf`, shipped tables in :mod:`.cdfdata`) and a
Poisson generator at a target load (:mod:`.generate`). ``netsim traffic`` writes its flows as a
flow file that ``netsim flows`` (or a cluster file) takes."""
from .cdf import SizeCDF, load_cdf, parse_cdf_text
from .cdfdata import BUILTIN_CDFS
from .generate import BackgroundFlows, BackgroundSpec, generate_background, offered_load, write_flow_csv

__all__ = ["SizeCDF", "load_cdf", "parse_cdf_text", "BUILTIN_CDFS", "BackgroundFlows", "BackgroundSpec",
           "generate_background", "offered_load", "write_flow_csv"]

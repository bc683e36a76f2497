import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPOLOGIES = os.path.join(ROOT, "topologies")
WORKLOADS = os.path.join(ROOT, "workloads")

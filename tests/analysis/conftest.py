import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import analysis_handmade as hm  # noqa: E402


@pytest.fixture
def flows_dir(tmp_path):
    return hm.make_flows_run(str(tmp_path / "flows_run"))


@pytest.fixture
def train_dir(tmp_path):
    return hm.make_training_run(str(tmp_path / "train_run"))

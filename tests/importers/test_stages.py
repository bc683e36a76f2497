"""Pipeline stages of an imported op graph (netsim.importers.stages), trial 8.

A Chakra trace does not state stages; without them an imported pipeline job booked its bubble as
``other`` and had no ``pipeline_bubble_s_per_stage``. Stages are the ranks joined by non-pipeline
ops, numbered by the dependency depth of their first compute op.
"""
from netsim.importers.job import OpTemplate
from netsim.importers.stages import infer_stages


def _two_stage_graph(up: tuple, down: tuple) -> list:
    """TP pairs ``up`` and ``down``; ``up`` computes first and sends to ``down`` (pp), which computes next."""
    return [
        OpTemplate("f_up0", "compute", (up[0],), duration_ps=1),                 # 0
        OpTemplate("f_up1", "compute", (up[1],), duration_ps=1),                 # 1
        OpTemplate("tp_up", "tp", up, deps=(0, 1)),                              # 2
        OpTemplate("send", "pp", (up[1], down[1]), deps=(2,)),                   # 3
        OpTemplate("tp_down", "tp", down, deps=(3,)),                            # 4
        OpTemplate("f_down0", "compute", (down[0],), duration_ps=1, deps=(4,)),  # 5
        OpTemplate("f_down1", "compute", (down[1],), duration_ps=1, deps=(4,)),  # 6
    ]


def test_stages_are_tp_groups_in_pipeline_order():
    assert infer_stages(_two_stage_graph((0, 1), (2, 3)), 4) == (0, 0, 1, 1)


def test_pipeline_order_is_the_graph_not_the_rank_numbers():
    # ranks 2, 3 run first: they are stage 0 although their numbers are higher
    assert infer_stages(_two_stage_graph((2, 3), (0, 1)), 4) == (1, 1, 0, 0)


def test_without_a_pipeline_op_every_rank_is_stage_0():
    t = [x for x in _two_stage_graph((0, 1), (2, 3)) if x.kind != "pp"]
    t = [OpTemplate(x.name, x.kind, x.ranks, duration_ps=x.duration_ps,
                    deps=tuple(d for d in x.deps if d < 3)) for x in t]
    assert infer_stages(t, 4) == (0, 0, 0, 0)

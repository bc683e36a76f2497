"""Figures the README and docs state about netsim are the committed measurements, and reruns agree.

``tools/docfigures/NAME.py`` measures a named set of values and renders the
phrases the docs quote; ``python -m tools.docfigures NAME`` writes them to
``docs/figures/NAME.json``. Here:

* fast, no simulation: every committed phrase is its script's template filled
  with the committed values, and appears in its doc (whitespace collapsed) —
  so neither a doc edit nor a template edit can drift from the data;
* a rerun of each script gives every value within its stated tolerance of the
  committed one (1 % unless the script says otherwise; closed forms 1e-9) —
  fast scripts in the default run, long ones marked ``slow``.
"""
import copy
import glob
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)                       # tools/ is run from the checkout, not installed
import tools.docfigures as df                  # noqa: E402

SCRIPTS = list(df.SCRIPTS)


def _slow_if(name):
    return [pytest.mark.slow] if df.load_script(name).SLOW else []


def test_every_record_has_a_script_and_every_script_a_record():
    on_disk = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(df.FIGURE_DIR, "*.json")))
    assert on_disk == sorted(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_docs_quote_the_committed_figures(name):
    rec, mod = df.load_record(name), df.load_script(name)
    assert rec["seed"] == mod.SEED and rec["script"] == f"tools/docfigures/{name}.py"
    assert set(rec["tolerance"]) == set(rec["values"])
    assert [f["id"] for f in rec["figures"]] == [f.id for f in mod.FIGURES], "script changed: regenerate"
    for stored, fig in zip(rec["figures"], mod.FIGURES):
        assert (stored["doc"], stored["template"]) == (fig.doc, fig.template), f"{fig.id}: regenerate"
        assert fig.render(rec["values"]) == stored["text"], fig.id
        assert df.normalize(stored["text"]) in df.doc_text(fig.doc), \
            f"{fig.doc} no longer says {stored['text']!r} ({name}.{fig.id}; python -m tools.docfigures {name})"


@pytest.mark.parametrize("name", [pytest.param(n, marks=_slow_if(n)) for n in SCRIPTS])
def test_rerun_reproduces_the_committed_figures(name):
    values = df.load_script(name).measure()
    assert df.differences(name, values, df.load_record(name)) == []


def test_a_moved_value_or_an_edited_doc_is_caught(tmp_path, monkeypatch):
    """The checks can fail: a value 2 % off is reported, one 0.5 % off is not; a phrase the doc
    no longer holds is missing from its text."""
    rec = df.load_record("dcqcn_presets")
    key = "default_fct_ms"
    moved = copy.deepcopy(rec["values"])
    moved[key] *= 1.02
    assert [d.split(":")[0] for d in df.differences("dcqcn_presets", moved, rec)] == [f"dcqcn_presets.{key}"]
    moved[key] = rec["values"][key] * 1.005
    assert df.differences("dcqcn_presets", moved, rec) == []
    moved[key] = float("nan")                   # a NaN compares false with everything: must be caught
    assert "not a finite number" in df.differences("dcqcn_presets", moved, rec)[0]
    del moved[key]
    assert "only in the record" in df.differences("dcqcn_presets", moved, rec)[0]
    fig = next(f for f in rec["figures"] if f["id"] == "table_default")
    doc = open(os.path.join(ROOT, fig["doc"]), encoding="utf-8").read()
    assert df.normalize(fig["text"]) in df.normalize(doc)
    edited = doc.replace(fig["text"], fig["text"].replace("ms", "µs", 1))
    assert df.normalize(fig["text"]) not in df.normalize(edited)


def test_normalize_joins_wrapped_lines():
    assert df.normalize("mean FCT 2.04–2.20\n  ms over  the") == "mean FCT 2.04–2.20 ms over the"


def test_record_refuses_non_finite_values():
    with pytest.raises(ValueError, match="non-finite"):
        df.record("readme_validation", {"cubic_k_s": float("nan")})

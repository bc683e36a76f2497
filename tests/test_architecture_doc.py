"""docs/architecture.md names real code: every module, file and function it cites exists.

Issue #16 asks the page to walk one flow from ``netsim flows`` to ``fct.csv`` naming the real
functions and modules; a rename or a split that leaves the page behind fails here.  A cited name is a
backticked token whose first part is a module or package of netsim (``simulate.run_flows``,
``network/path.py``, ``backends/packet/backend.py: PacketBackend.send``, ``cli/args.check_backend_options``);
tokens with spaces or calls (``Router.path(src, dst, 0)``), file names of a run (``fct.csv``) and
other projects' names are not checked.
"""
from __future__ import annotations

import importlib
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "architecture.md")
PKG = os.path.join(ROOT, "netsim")


def _is_netsim(first: str) -> bool:
    return os.path.isfile(os.path.join(PKG, first + ".py")) or os.path.isdir(os.path.join(PKG, first))


def _citations(text: str) -> list[str]:
    out = []
    for tok in re.findall(r"`([^`\n]+)`", text):
        tok = tok.strip().rstrip("/")
        if re.fullmatch(r"\w+\.py", tok):     # a bare file name is relative to the package the text is about
            continue
        if re.fullmatch(r"[\w/]+\.py: [\w.]+", tok) or re.fullmatch(r"[\w/]+(\.py)?(\.\w+)*", tok):
            first = re.split(r"[./: ]", tok)[0]
            if _is_netsim(first) and not tok.endswith((".csv", ".json", ".txt", ".partial", ".yaml")):
                out.append(tok)
    return sorted(set(out))


def _resolve(tok: str):
    """The object a citation names (a module, class, function or attribute), or raise."""
    if ": " in tok:
        path, attrs = tok.split(": ")
    elif ".py" in tok:
        path, attrs = tok, ""
    else:
        path, attrs = tok.replace("/", "."), ""
    parts = path[:-3].replace("/", ".").split(".") if path.endswith(".py") else path.replace("/", ".").split(".")
    if path.endswith(".py") and not os.path.isfile(os.path.join(PKG, *parts[:-1], parts[-1] + ".py")):
        raise FileNotFoundError(path)
    names = parts + (attrs.split(".") if attrs else [])
    for i in range(len(names), 0, -1):          # the longest importable prefix, then attributes
        try:
            obj = importlib.import_module("netsim." + ".".join(names[:i]))
        except ModuleNotFoundError:
            continue
        for a in names[i:]:
            obj = getattr(obj, a)
        return obj
    raise ModuleNotFoundError(tok)


def test_the_page_cites_code():
    with open(DOC, encoding="utf-8") as fh:
        text = fh.read()
    walk = text.split("## One flow, from `netsim flows` to `fct.csv`", 1)[1].split("\n## ", 1)[0]
    cited = _citations(walk)
    assert {"simulate.run_flows", "flowfile.load_flows", "records.make_record"} <= set(cited), cited


def test_a_wrong_name_is_caught():
    with pytest.raises(AttributeError):
        _resolve("simulate.no_such_function")
    with pytest.raises(FileNotFoundError):
        _resolve("network/no_such_module.py")


#: the sections that describe today's code (the others tell what it was before)
SECTIONS = ("## Layers", "## The network layer", "## Capabilities", "## One flow", "## The flow backend")


def _current_text() -> str:
    with open(DOC, encoding="utf-8") as fh:
        parts = ("\n" + fh.read()).split("\n## ")
    return "\n".join(p for p in parts if ("## " + p).startswith(SECTIONS))


#: named as what was there before issue 16 ("parameters lived in the packet backend")
GONE = {"backends/packet/defaults.py"}
CITED = [t for t in _citations(_current_text()) if t not in GONE]


@pytest.mark.parametrize("tok", CITED)
def test_every_cited_name_exists(tok):
    _resolve(tok)

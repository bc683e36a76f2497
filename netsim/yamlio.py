"""Reading YAML input files so that every problem is one line naming the file and line.

:func:`load_yaml` parses with PyYAML's safe loader (or a subclass) and turns
what PyYAML and Python can raise on hostile or broken input into one
:class:`~netsim.errors.InputError` line:

* a syntax error or a forbidden character (a NUL byte: PyYAML's reader error
  spans two lines, "unacceptable character ... in <file>, position 7") becomes
  ``FILE: line L: not valid YAML (...)``;
* a document nested deeper than :data:`MAX_DEPTH` levels is rejected — both
  when PyYAML's recursive composer runs out of stack (a 1,000-deep document
  used to end in a 3,001-line ``RecursionError``) and after parsing, before
  anything else walks the tree recursively.

* a number in exponent form without a dot or without the exponent's sign
  (``1e12``, ``5e-1``, ``1.0e9``) is a number,
  as YAML 1.2 reads it (PyYAML follows YAML 1.1, where it is a string and a
  field would then report ``must be a number (got '1e12')``):
  :func:`yaml12_floats`.

Left out: limits on size and on alias expansion (safe_load already refuses
arbitrary objects; a file's size is bounded by the disk).
"""
from __future__ import annotations

import re

import yaml

from .errors import InputError

#: deepest nesting accepted in an input YAML file (the shipped files nest at most 5 levels)
MAX_DEPTH = 64


def one_line_problem(exc: yaml.YAMLError, text: str | None = None) -> tuple[str, int | None]:
    """``(problem, line)`` of a PyYAML error, the problem on one line; ``line`` is 1-based or None."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    line = mark.line + 1 if mark is not None else None
    if isinstance(exc, yaml.reader.ReaderError):  # no mark: a character position in the stream
        problem = (f"unacceptable character #x{exc.character:04x}" if isinstance(exc.character, int)
                   else str(exc.reason))
        if text is not None and isinstance(exc.position, int):
            line = text.count("\n", 0, exc.position) + 1
    problem = re.sub(r"\s+", " ", str(problem if problem is not None else exc)).strip()
    return problem, line


def _depth_ok(doc) -> bool:
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return True


#: YAML 1.2's exponent floats that YAML 1.1 (PyYAML) reads as strings: ``1e12``, ``-5E-1``, ``1_000e3``
_EXP_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$")


def yaml12_floats(loader_cls):
    """Make ``loader_cls`` (a SafeLoader subclass) read ``1e12`` as the float YAML 1.2 says it is.

    >>> class L(yaml.SafeLoader): pass
    >>> yaml.load("a: 1e12", Loader=yaml12_floats(L))["a"], yaml.safe_load("a: 1e12")["a"]
    (1000000000000.0, '1e12')
    >>> [yaml.load(f"a: {t}", Loader=L)["a"] for t in ("1.0e9", "2.5E-3", ".5e1", "1.0e+9")]
    [1000000000.0, 0.0025, 5.0, 1000000000.0]
    """
    loader_cls.add_implicit_resolver("tag:yaml.org,2002:float", _EXP_FLOAT, list("-+.0123456789"))
    return loader_cls


class DuplicateKey(Exception):
    """A mapping key given twice (raised inside :class:`UniqueKeyLoader`; :func:`load_yaml` names the file)."""

    def __init__(self, key, line: int):
        super().__init__(key, line)
        self.key, self.line = key, line


class UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys (YAML itself silently keeps the last one)."""


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            if key in seen:
                raise DuplicateKey(key, key_node.start_mark.line + 1)
            seen.add(key)
        except TypeError:  # an unhashable key: SafeLoader reports it below
            pass
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
yaml12_floats(UniqueKeyLoader)


def load_yaml(text: str, source: str, *, error: type = InputError, loader=UniqueKeyLoader,
              compose: bool = False):
    """Parse ``text`` (the content of ``source``); with ``compose`` also return PyYAML's node tree.

    Raises ``error`` (an :class:`InputError` subclass) for invalid YAML or a
    document nested deeper than :data:`MAX_DEPTH`.

    >>> load_yaml("a: {b: [1, 2]}", "x.yaml")
    {'a': {'b': [1, 2]}}
    >>> load_yaml("a: \\x00", "x.yaml")
    Traceback (most recent call last):
    ...
    netsim.errors.InputError: x.yaml: line 1: not valid YAML (unacceptable character #x0000)
    """
    too_deep = f"nested deeper than {MAX_DEPTH} levels"
    try:
        node = yaml.compose(text, Loader=loader) if compose else None
        doc = yaml.load(text, Loader=loader)
    except RecursionError:
        raise error(too_deep, source=source, accepted="a shallower document") from None
    except DuplicateKey as dup:
        raise error("duplicate key", source=source, where=f"line {dup.line}", value=dup.key,
                    accepted="each name once (YAML would silently keep the last)") from None
    except yaml.YAMLError as exc:
        problem, line = one_line_problem(exc, text)
        raise error(f"not valid YAML ({problem})", source=source,
                    where=f"line {line}" if line else None) from None
    if not _depth_ok(doc):
        raise error(too_deep, source=source, accepted="a shallower document")
    return (doc, node) if compose else doc

"""The backends: ``packet``, ``flow`` and ``analytic``, each a subpackage built on :mod:`.base`.

This package module only names them (importing it imports no backend and no SimPy).
"""

#: the backends shipped in this package, each a subpackage registering itself on import
BUILTIN_BACKENDS = ("packet", "flow", "analytic")

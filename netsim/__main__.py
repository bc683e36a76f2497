"""``python -m netsim``: the command-line entry point (:func:`netsim.cli.main`); it models nothing itself."""
import sys

from .cli import main

sys.exit(main())

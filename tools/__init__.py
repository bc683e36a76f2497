"""Maintenance tools run from the checkout (``python -m tools.docfigures``); not installed."""

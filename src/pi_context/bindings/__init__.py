"""Thin bindings around the pure core: sessions, note storage and model-facing tools.

Bindings gather facts, call the core and perform the named effect; they hold no lifecycle
decisions of their own.
"""

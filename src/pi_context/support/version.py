"""The package's version, the one place it is written (``pi_context.__version__`` reads it)."""

__version__ = "0.1.0"

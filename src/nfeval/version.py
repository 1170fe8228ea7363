"""The library's version (re-exported as ``nfeval.__version__``)."""

__version__ = "0.1.0"

"""pyjax's version (pyjax.__version__), here so that pyjax/_src reads it without importing
the public package."""
__version__ = "0.1.0"

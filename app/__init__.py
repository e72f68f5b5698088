"""DocDesk's command line and window."""

__version__ = "0.1.0"

"""kubectl win: a kubectl plugin for clusters with Windows nodes."""

__version__ = "0.1.0"

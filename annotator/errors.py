"""Errors raised by the annotator package."""
from __future__ import annotations


class AnnotatorError(RuntimeError):
    """Base class for failures inside the linking pipeline."""


class ModelLoadError(AnnotatorError):
    """A checkpoint, encoder or index folder is missing files or does not match its config."""


class ConfigError(ValueError):
    """A configuration value or key is not valid."""


class KBFormatError(ValueError):
    """A knowledge-base file is in none of the supported formats."""

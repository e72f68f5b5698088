"""Exceptions raised by the engine. Messages name the problem and the fix."""

from __future__ import annotations


class EngineError(Exception):
    """Base class: a model or server could not do what was asked."""


class ModelNotFound(EngineError):
    """The configured model file or name does not exist."""


class ModelLoadError(EngineError):
    """The model exists but cannot be loaded (corrupt, wrong format, out of memory)."""


class BackendUnavailable(EngineError):
    """A backend's library or server is not there (not installed, not running)."""


class ServerError(EngineError):
    """An OpenAI-compatible server answered with an error or broke off."""


class ContextTooLong(EngineError):
    """The prompt does not fit the model's context window."""


class NoAnswer(EngineError):
    """The model's reply held no answer: it thought and never wrote one (an unclosed thought)."""


class Cancelled(EngineError):
    """Generation was stopped by the user."""

"""Errors raised for bad input: each message names the value and the limit."""


class InputError(ValueError):
    """What the caller passed cannot be used; the message is fit to show a user."""


class ModelNotFoundError(InputError):
    """The model name is not bundled, not a local folder, and not reachable."""

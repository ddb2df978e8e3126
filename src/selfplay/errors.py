"""Errors that reach a user as one clear line (bad config, missing tool, bad input)."""


class UserError(Exception):
    """A problem the user can fix; its message is shown alone, without a traceback."""


class MissingToolError(UserError):
    """A tool or package the chosen path needs is not installed; the message says what to install."""


def require_module(module: str, install_hint: str):
    """Import ``module`` or raise MissingToolError naming what to install."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised through callers
        raise MissingToolError(
            f"Python package '{module}' is needed here but is not installed: {install_hint}"
        ) from exc

"""Exception types raised at paperline's boundaries.

Every message names the thing a user must fix (a file, a field, a key path),
so the CLI can print it on one line and exit non-zero.
"""


class PaperlineError(Exception):
    """Base class: a problem the user can act on (bad input, bad params, bad data)."""


class DataError(PaperlineError):
    """An input file or dataset is missing, corrupted or has the wrong schema."""


class ValidationFailed(DataError):
    """A dataset failed its Great Expectations suite."""


class ParamsError(PaperlineError):
    """A params value is unknown, of the wrong type or out of range."""


class OfflineError(PaperlineError):
    """Something needed the network (a hub id) while running offline."""


def closest(name: str, choices) -> str | None:
    """The choice a misspelt ``name`` most likely meant (difflib, cutoff 0.6), or None: for "did you mean"."""
    import difflib

    found = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None

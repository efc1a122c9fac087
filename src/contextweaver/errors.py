"""The root of every error ContextWeaver raises, so a caller can catch the package's errors in one clause.

Each error also keeps its builtin base (ValueError for bad input, RuntimeError for failures, KeyError for
a missing session), so code that catches those keeps working.
"""


class ContextWeaverError(Exception):
    """Raised by ContextWeaver; the message says what went wrong and what to do."""

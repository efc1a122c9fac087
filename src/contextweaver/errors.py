"""The root of every error ContextWeaver raises, so a caller can catch the package's errors in one clause.

Each error also keeps its builtin base (ValueError for bad input, RuntimeError for failures, KeyError for
a missing session), so code that catches those keeps working. The hierarchy:

    ContextWeaverError
    ├── ConfigError (ValueError)          a setting, a config file or an override that cannot be used
    │   ├── UnknownName                   a strategy, analyzer, selector, format... that is not registered
    │   └── SelectWeightsError            a selection weights file (config/select_weights.py)
    ├── CallOrder (RuntimeError)          begin() twice, or add_step()/context() before begin()
    ├── BudgetError (ValueError)          the budget cannot hold the root and the newest step (weaving/)
    ├── TrajectoryError (ValueError)      a trajectory file that cannot be read (formats/); NotATrajectory:
    │                                     a file no reader claims
    ├── ModelError (RuntimeError)         the memory model failed: timeouts, refusals, replies (models/)
    ├── ReplyError (ValueError)           a memory-model reply that does not parse (prompts/)
    ├── StoreError (RuntimeError)         the session store: SessionNotFound (KeyError), SessionExists,
    │                                     StepConflict (store/)
    └── the proxy's refusals (serve/)     BadPayload, BadConversation, BadSessionId, BudgetTooSmall,
                                          DivergedHistory, NotOwner, StaleHistory, OverCapacity, BodyTooLarge
"""


class ContextWeaverError(Exception):
    """Raised by ContextWeaver; the message says what went wrong and what to do."""


class ConfigError(ContextWeaverError, ValueError):
    """A setting that cannot be used; the message names the file or flag, the setting and the fix."""


class UnknownName(ConfigError):
    """A component name that is not registered; the message lists the valid ones."""


class CallOrder(ContextWeaverError, RuntimeError):
    """A strategy used out of order (each conversation: begin once, then add_step and context)."""

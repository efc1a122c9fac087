"""Integrations with the agents people run. Each module imports its agent framework, so import the one you use:

    from contextweaver.integrations.minisweagent import ContextWeaverAgent      # contextweaver-agents[minisweagent]
    from contextweaver.integrations.sweagent import ContextWeaverHistoryProcessor  # SWE-agent (from its repo)
    from contextweaver.integrations.openhands import ContextWeaverCondenser    # contextweaver-agents[openhands]
    from contextweaver.integrations.langgraph import ContextWeaverMiddleware   # contextweaver-agents[langgraph]

All take the same settings (`settings.WeavingSettings`) and save or expose each woven context with
the reason for every step (`contexts.py`, `record.py`).
"""


def missing_framework(module: str, framework: str, install: str, error: ImportError) -> ModuleNotFoundError:
    """The error an integration raises when its framework is not importable: what is missing and the
    line that installs it (a ModuleNotFoundError, so `except ImportError` and importorskip still work)."""
    return ModuleNotFoundError(
        f"{module} needs {framework}, not importable in this Python ({error}): {install}",
        name=error.name,
    )

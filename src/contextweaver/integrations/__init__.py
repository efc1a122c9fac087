"""Integrations with the agents people run. Each module imports its agent framework, so import the one you use:

    from contextweaver.integrations.minisweagent import ContextWeaverAgent      # contextweaver[minisweagent]
    from contextweaver.integrations.sweagent import ContextWeaverHistoryProcessor  # SWE-agent (from its repo)
    from contextweaver.integrations.openhands import ContextWeaverCondenser    # contextweaver[openhands]
    from contextweaver.integrations.langgraph import ContextWeaverMiddleware   # contextweaver[langgraph]

All take the same settings (`settings.WeavingSettings`) and save or expose each woven context with
the reason for every step (`contexts.py`, `record.py`).
"""

"""Integrations with the agents people run: mini-swe-agent (agent class or model wrapper) and a
SWE-agent-style history processor. Each module imports its agent framework, so import the one you use:

    from contextweaver.integrations.minisweagent import ContextWeaverAgent   # pip install contextweaver[minisweagent]
    from contextweaver.integrations.sweagent import ContextWeaverHistoryProcessor
"""

"""The sessions and their weaving processes: a conversation found or started, then woven under budget.

Routing (which session a request continues, the weave itself), the weaving processes (workers, build,
parent_watch) and what they keep per session (histories, session_bytes, simulation), the loop guard,
recall (a session's capability URL, its steps read back).
"""

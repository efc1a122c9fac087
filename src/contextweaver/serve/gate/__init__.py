"""The gate: what every request passes before any route runs.

The HTTP server and its header deadline (server), who may talk to the proxy (guard), how many requests
and body bytes are in flight (limits), a body parsed strictly (payload), the proxy's own headers and
OpenAI-shaped errors (http), secrets kept out of the logs (redact).
"""

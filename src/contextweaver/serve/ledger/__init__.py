"""The ledger and its views: what the proxy records of each answer and how an operator reads it.

Metering (a request's tokens and cost, stored), the prompt-cache ledger, the Prometheus metrics, the
error log (one line per refused or failed request), and the views: inspect (a store's sessions as
JSON, also for `contextweaver sessions`) and the dashboard.
"""

"""Deterministic fakes and fixtures that ship with the package, for your tests and ours (as httpx ships
`MockTransport`): a real local HTTP server speaking the OpenAI chat API (`fake_server`), and a run with a
planted true parent (`planted`). The offline model backend itself is `models.fake` (backend `fake`)."""

"""Deterministic fakes and fixtures that ship with the package, for your tests and ours (as httpx ships
`MockTransport`): a real local HTTP server speaking OpenAI chat, Anthropic Messages and OpenAI Responses (`fake_server`,
with `fake_wire` for the last two's answers and event streams), and a run with a
planted true parent (`planted`). The offline model backend itself is `models.fake` (backend `fake`)."""

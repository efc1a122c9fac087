"""What the proxy must send upstream for a request of any wire format: ContextWeaver's own weaving."""

from __future__ import annotations

from typing import Any

from contextweaver.config import WeaverConfig
from contextweaver.serve.wires.wire import Wire
from contextweaver.weaver import ContextWeaver
from tests.serve.harness import PER_STEP


def woven_field(wire: Wire, payload: dict[str, Any], config: WeaverConfig = PER_STEP) -> Any:
    """The request's history field after weaving the same steps with a fresh ContextWeaver."""
    conversation, state = wire.read(dict(payload), "auto")
    weaver = ContextWeaver(config)
    weaver.begin(conversation.root)
    for step in conversation.steps:
        weaver.add_step(step)
    out: dict[str, Any] = {}
    wire.write(out, [*weaver.context().messages, *conversation.pending], state)
    return out[wire.field]

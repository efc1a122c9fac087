"""The fake OpenAI-compatible upstream as its own process, logging every request body to a JSONL file.

Each logged body also has `_authorization`: the Authorization header the upstream received.

python upstream_process.py LOG.jsonl     # prints the port, then serves until killed
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from contextweaver.testing.fake_server import FakeLLMServer, Reply, Request  # noqa: E402
from tests.serve.harness import tool_call_reply  # noqa: E402


def main() -> None:
    lock = threading.Lock()
    with Path(sys.argv[1]).open("a", encoding="utf-8") as log:
        serve(log, lock)


def serve(log: object, lock: threading.Lock) -> None:

    def reply(request: Request) -> Reply:
        with lock:
            record = {**request.body, "_authorization": request.headers.get("authorization")}
            log.write(json.dumps(record) + "\n")  # type: ignore[attr-defined]
            log.flush()  # type: ignore[attr-defined]
        if request.body.get("stream"):
            return Reply(text="streamed answer from the upstream process")
        return tool_call_reply(request)

    server = FakeLLMServer(reply)
    print(server.port, flush=True)
    server._httpd.serve_forever()  # in the main thread, until the process is killed


if __name__ == "__main__":
    main()

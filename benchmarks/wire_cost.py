"""The proxy's cost of one request on the Anthropic and Responses wires (not a test).

    python benchmarks/wire_cost.py --lengths 1000,10000 --wires messages,responses,chat/completions

A real `contextweaver serve` (SQLite, weaving processes) before a trivial upstream that reads the
body and answers `{}`. A session of N turns is sent once (cold), then REQUESTS requests each adding
one turn; reported: the median time of those through the proxy, the same body sent to the upstream
directly, and a plain json.loads + json.dumps of it (the least any proxy that reads the body pays).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from proxy_load import start_replicas

REQUESTS = 10
JSON = {"content-type": "application/json"}
UPSTREAM = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def output(i: int) -> str:
    return "\n".join(f"src/module_{i}.py:{line}: value_{i}_{line} = compute({line})" for line in range(12))


def anthropic_body(turns: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix the helper calls, session-long"}]
    for i in range(turns):
        messages += [
            {"role": "assistant", "content": [{"type": "text", "text": f"look at module {i}"},
                                              {"type": "tool_use", "id": f"toolu_{i}", "name": "Bash",
                                               "input": {"command": f"grep -n value src/module_{i}.py"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                          "content": output(i)}]},
        ]  # fmt: skip
    messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return {"model": "fake", "max_tokens": 1024, "system": [{"type": "text", "text": "agent",
            "cache_control": {"type": "ephemeral"}}], "messages": messages}  # fmt: skip


def responses_body(turns: int) -> dict[str, Any]:
    items: list[dict[str, Any]] = [{"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": "fix the helper calls"}]}]  # fmt: skip
    for i in range(turns):
        items += [
            {"type": "function_call", "call_id": f"call_{i}", "name": "shell",
             "arguments": json.dumps({"command": ["grep", "-n", "value", f"src/module_{i}.py"]})},
            {"type": "function_call_output", "call_id": f"call_{i}", "output": output(i)},
        ]  # fmt: skip
    return {"model": "fake", "instructions": "agent", "store": False, "input": items}


def chat_body(turns: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "agent"},
                                      {"role": "user", "content": "fix the helper calls, session-long"}]  # fmt: skip
    for i in range(turns):
        call = {"id": f"call_{i}", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": f"grep -n value src/module_{i}.py"})}}  # fmt: skip
        messages += [{"role": "assistant", "content": f"look at module {i}", "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": f"call_{i}", "content": output(i)}]  # fmt: skip
    return {"model": "fake", "messages": messages}


WIRES = {"messages": anthropic_body, "responses": responses_body, "chat/completions": chat_body}


def measure(wire: str, turns: int) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="cw-wire-"))
    upstream = subprocess.Popen([sys.executable, "-c", UPSTREAM], stdout=subprocess.PIPE)
    assert upstream.stdout is not None
    upstream_url = f"http://127.0.0.1:{int(upstream.stdout.readline())}/v1"
    [(server, proxy_url)] = start_replicas(1, str(workdir / "s.db"), upstream_url)
    try:
        times, direct, codec = [], [], []
        with httpx.Client(timeout=3600) as client:
            for k in range(turns - REQUESTS, turns + 1):
                body = json.dumps(WIRES[wire](k)).encode()
                start = time.perf_counter()
                answer = client.post(f"{proxy_url}/v1/{wire}", content=body,
                                     headers={**JSON, "x-contextweaver-session": "long"})  # fmt: skip
                answer.raise_for_status()
                times.append(time.perf_counter() - start)
                start = time.perf_counter()
                client.post(f"{upstream_url}/{wire}", content=body, headers=JSON).raise_for_status()
                direct.append(time.perf_counter() - start)
                start = time.perf_counter()
                json.dumps(json.loads(body), ensure_ascii=False).encode()
                codec.append(time.perf_counter() - start)
    finally:
        server.terminate()
        server.wait(30)
        upstream.terminate()

    def median_ms(values: list[float]) -> float:
        return round(statistics.median(values[1:]) * 1000, 2)

    proxy, up = median_ms(times), median_ms(direct)
    return {"proxy_ms": proxy, "upstream_ms": up, "added_ms": round(proxy - up, 2), "json_ms": median_ms(codec),
            "body_mb": round(len(body) / 1e6, 1), "cold_s": round(times[0], 2)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lengths", default="1000,10000")
    parser.add_argument("--wires", default=",".join(WIRES))
    args = parser.parse_args()
    for wire in args.wires.split(","):
        for turns in (int(x) for x in args.lengths.split(",")):
            print(f"{wire:<10}{turns:>7} turns  {json.dumps(measure(wire, turns))}", flush=True)


if __name__ == "__main__":
    main()

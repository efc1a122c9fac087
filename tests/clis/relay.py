"""A recording relay between a CLI and the proxy: the bytes the client sent, for comparison with the
bytes the upstream received (a request the proxy did not cut must reach the upstream unchanged).

python relay.py TARGET_URL LOG.jsonl    # prints the port, then relays until killed
"""

from __future__ import annotations

import base64
import http.client
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "accept-encoding"}


def main() -> None:
    target = urlsplit(sys.argv[1])
    lock = threading.Lock()
    log = open(sys.argv[2], "a", encoding="utf-8")  # noqa: SIM115 - open until the process is killed

    class Relay(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self._relay(b"")

        def do_POST(self) -> None:
            self._relay(self.rfile.read(int(self.headers.get("content-length") or 0)))

        def _relay(self, body: bytes) -> None:
            connection = http.client.HTTPConnection(target.hostname, target.port, timeout=300)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            connection.request(self.command, self.path, body=body or None, headers=headers)
            answer = connection.getresponse()
            with lock:
                record = {"path": self.path, "status": answer.status, "raw": base64.b64encode(body).decode()}
                log.write(json.dumps(record) + "\n")
                log.flush()
            self.send_response(answer.status)
            for name, value in answer.getheaders():
                if name.lower() not in HOP:
                    self.send_header(name, value)
            self.send_header("connection", "close")
            self.end_headers()
            while chunk := answer.read1(65536):
                self.wfile.write(chunk)
                self.wfile.flush()
            connection.close()
            self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

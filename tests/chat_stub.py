"""A loopback OpenAI-style chat endpoint for tests (one helper instead of a stub class per test file)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer


def echo_reply(body: dict) -> str:
    """How many messages the request held and which model it named."""
    return f"I hear you ({len(body['messages'])} messages, model {body['model']})."


@contextlib.contextmanager
def chat_endpoint(reply: Callable[[dict], str] = echo_reply) -> Iterator[str]:
    """Serve chat completions on loopback, each answered with ``reply(request body)``; yields the base URL
    (``http://127.0.0.1:<port>/v1``). The server is shut and its port closed on exit."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            message = {"role": "assistant", "content": reply(body)}
            out = json.dumps({"choices": [{"message": message}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()

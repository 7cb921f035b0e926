"""A loopback OpenAI-compatible chat server for tests: ``POST /v1/chat/completions`` answers with ``reply(body)``,
``GET /v1/models`` (the harness's health check) answers 200. Every request body is kept in ``server.bodies``."""
from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Iterator


class LoopbackChat:
    def __init__(self, url: str):
        self.url = url
        self.bodies: list[dict] = []

    @property
    def prompts(self) -> list[str]:
        """The last message of every request, in arrival order."""
        return [b["messages"][-1]["content"] for b in self.bodies]


@contextlib.contextmanager
def loopback_chat(reply: Callable[[dict], str]) -> Iterator[LoopbackChat]:
    state: LoopbackChat

    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.bodies.append(body)
            # the fields a real server's answer has, which clients read (lm-eval the index, litellm the model)
            self._send(200, {"id": f"chatcmpl-{len(state.bodies)}", "object": "chat.completion", "created": 0,
                             "model": body.get("model", "served"),
                             "choices": [{"index": 0, "message": {"role": "assistant", "content": reply(body)},
                                          "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

        def do_GET(self):
            self._send(200 if self.path == "/v1/models" else 404, {"data": [{"id": "served"}]})

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state = LoopbackChat(f"http://127.0.0.1:{srv.server_address[1]}")
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield state
    finally:
        srv.shutdown()
        srv.server_close()

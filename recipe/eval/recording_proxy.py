"""A loopback proxy between a harness and an OpenAI-compatible endpoint that keeps every exchange.

The harnesses of ``recipe.eval.harness_suites`` report aggregate scores; what they sent and what came back is what a
reader checks a score against (``items.jsonl``). Each POST under ``/v1/`` is forwarded to the upstream base URL
unchanged except for ``chat_template_kwargs.enable_thinking``, which is set when the row's protocol fixes thinking on
or off (vLLM applies it in the chat template; a harness's request never carries it) and the request does not set it.
GET ``/v1/models`` is forwarded too (harnesses use it as a health check). Exchanges are kept in arrival order.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx


class RecordingProxy:
    def __init__(self, upstream: str, *, thinking: bool | None = None, timeout_s: float = 3600.0,
                 api_key: str | None = None):
        self.upstream = upstream.rstrip("/").removesuffix("/v1")
        self.thinking = thinking
        self.exchanges: list[dict] = []
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=timeout_s)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _reply(self, code: int, data: bytes, ctype: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                try:
                    r = proxy._client.get(proxy.upstream + self.path, headers=proxy._headers)
                    self._reply(r.status_code, r.content, r.headers.get("content-type", "application/json"))
                except httpx.HTTPError as e:
                    self._reply(502, json.dumps({"error": f"upstream unreachable: {e}"}).encode())

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._reply(400, b'{"error": "request body is not JSON"}')
                    return
                if proxy.thinking is not None and isinstance(body, dict) and "messages" in body:
                    kwargs = dict(body.get("chat_template_kwargs") or {})
                    kwargs.setdefault("enable_thinking", proxy.thinking)
                    body["chat_template_kwargs"] = kwargs
                rec = {"path": self.path, "request": body}
                try:
                    r = proxy._client.post(proxy.upstream + self.path, json=body, headers=proxy._headers)
                    rec["status"] = r.status_code
                    try:
                        rec["response"] = r.json()
                    except ValueError:
                        rec["response"] = {"text": r.text[:2000]}
                    self._reply(r.status_code, r.content, r.headers.get("content-type", "application/json"))
                except httpx.HTTPError as e:
                    rec["status"], rec["error"] = 502, f"upstream unreachable: {e}"
                    self._reply(502, json.dumps({"error": rec["error"]}).encode())
                with proxy._lock:
                    proxy.exchanges.append(rec)

            def log_message(self, *a):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "RecordingProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()

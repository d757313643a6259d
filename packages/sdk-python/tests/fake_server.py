"""A local HTTP server whose answers a test scripts, recording every request: for the SDK
behaviour the Prism mock cannot show (several pages, 429 then success)."""
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class FakeServer:
    """answer(request, index) -> (status, body, headers); `requests` holds each request as a dict
    of method, path, query (name -> first value) and body (text)."""

    def __init__(self, answer):
        self.requests = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                url = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                request = {
                    "method": self.command,
                    "path": url.path,
                    "query": {k: v[0] for k, v in parse_qs(url.query).items()},
                    "body": self.rfile.read(length).decode("utf-8"),
                }
                server.requests.append(request)
                status, body, headers = answer(request, len(server.requests) - 1)
                payload = json.dumps(body).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _answer

            def log_message(self, *args):
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self._http.server_address[1]
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def close(self):
        self._http.shutdown()
        self._http.server_close()


_SAMPLES = {"str": "x", "int": 1, "float": 1.5, "bool": False, "object": {}, "datetime": "2026-11-20T05:04:03Z"}


def full(model, **values):
    """A JSON object with every member `model` lists (placeholder values by type), then `values`
    (by the API's spelling): the generated models refuse a missing required member."""
    body = {wire: [] if model.openapi_types[attr].startswith("list[") else _SAMPLES[model.openapi_types[attr]] for attr, wire in model.attribute_map.items()}
    body.update(values)
    return body

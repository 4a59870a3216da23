"""The soak's webhook receiver: a game backend's endpoint on a loopback port that checks
each request's Standard Webhooks signature (``webhook-id``, ``webhook-timestamp``,
``webhook-signature``: HMAC-SHA256 of ``id.timestamp.body`` under the secret) and writes
one JSON line per request it takes (flushed before it answers ``204``)::

    {"id": "msg_…", "type": "record.created", "record": 17, "valid": true, "at": 1764820000.1}

    SOAK_WEBHOOK_SECRET=whsec_… python -m bench.soak.receiver --port 8123 --out deliveries.jsonl

A request whose signature does not verify is written too (``"valid": false``) and answered
``400``, so the service retries it and the checker sees it.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import IO, Any

#: a signature older or newer than this is refused, as the standard's libraries do
TOLERANCE_SECONDS = 300


def signature_valid(secret: str, headers: Any, body: bytes, now: float | None = None) -> bool:
    """Whether ``body`` with ``headers`` is signed with ``secret`` (``whsec_`` and base64), within the tolerance."""
    msg_id, stamp, signatures = (headers.get(name) for name in ("webhook-id", "webhook-timestamp",
                                                                  "webhook-signature"))
    if not (msg_id and stamp and signatures):
        return False
    try:
        if abs((now if now is not None else time.time()) - int(stamp)) > TOLERANCE_SECONDS:
            return False
        key = base64.b64decode(secret.removeprefix("whsec_"))
    except ValueError:
        return False
    expected = base64.b64encode(hmac.new(key, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest())
    return any(version == "v1" and hmac.compare_digest(value.encode(), expected)
               for version, _, value in (part.partition(",") for part in signatures.split()))


def handler(secret: str, out: IO[str]) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Receiver(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            valid = signature_valid(secret, self.headers, body)
            try:
                event = json.loads(body)
                kind, data = event.get("type"), event.get("data") or {}
            except (ValueError, AttributeError):
                kind, data = None, {}
            line = {"id": self.headers.get("webhook-id"), "type": kind,
                    "record": data.get("id") if isinstance(data, dict) else None, "valid": valid, "at": time.time()}
            with lock:
                out.write(json.dumps(line) + "\n")
                out.flush()
            self.send_response(204 if valid else 400)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Receiver


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.soak.receiver", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", required=True, help="the file the deliveries are appended to, one JSON line each")
    args = parser.parse_args(argv)
    secret = os.environ["SOAK_WEBHOOK_SECRET"]
    with open(args.out, "a") as out:
        server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(secret, out))
        server.daemon_threads = True
        server.serve_forever()


if __name__ == "__main__":
    main()

"""A loopback stand-in for the Apify API that answers every request 401, then runs a command.

    python apify_api_401.py COMMAND ARGS...

Binds 127.0.0.1 on a free port *before* starting COMMAND (so the first request never races
the listener), sets `APIFY_API_BASE_URL` to it, and execs COMMAND; the stand-in lives on in a
forked child that dies with COMMAND. With it, `@apify/actors-mcp-server` fails every API call
at once ("token is not valid") instead of retrying an unreachable api.apify.com for minutes.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

BODY = json.dumps(
    {
        "error": {
            "type": "token-not-valid",
            "message": "User was not found or authentication token is not valid",
        }
    }
).encode()


class Unauthorized(BaseHTTPRequestHandler):
    def _answer(self) -> None:
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    server = HTTPServer(("127.0.0.1", 0), Unauthorized)
    port = server.server_address[1]
    if os.fork() == 0:
        try:  # die with the command (Linux): PR_SET_PDEATHSIG
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
        except (OSError, AttributeError):
            pass
        # Let go of the MCP pipes: they belong to the command, and must close when it exits.
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        server.serve_forever()
        return
    server.socket.close()
    os.environ["APIFY_API_BASE_URL"] = f"http://127.0.0.1:{port}"
    os.execvp(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()

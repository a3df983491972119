"""The floor for `bench_serve.py`: a route that does nothing, on serve's own socket and HTTP
stack (uvicorn, httptools, Starlette), so the benchmark shows how far above serve's rate its
client can go.

    python benchmarks/serve_floor.py PORT    # prints "ready" once it listens
"""

import asyncio
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from venice_terminal_agent.fronts.listening import listening_socket


async def reply(request: Request) -> JSONResponse:
    await request.body()
    return JSONResponse({"text": "stopped: answered"})


app = Starlette(routes=[Route("/v1/chats/{chat}/messages", reply, methods=["POST"])])
sock = listening_socket("127.0.0.1", int(sys.argv[1]))
print("ready", flush=True)
config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))

"""A stdio MCP server on the mcp SDK (`MCPServer`) that traces itself, as a team's own server
would: the SDK's server middleware opens a span for each request from the trace context in
`params._meta`, and this process sends its spans over OTLP/HTTP to the endpoint given.

    python tests/servers/traced_mcp.py http://127.0.0.1:PORT

Its tool `where` (read-only) answers with the trace id it runs in, as the server saw it.
"""

from __future__ import annotations

import sys

from mcp.server import MCPServer
from mcp.types import ToolAnnotations
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "traced-mcp"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=sys.argv[1] + "/v1/traces")))
trace.set_tracer_provider(provider)

server = MCPServer("traced")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def where() -> str:
    """The trace id this call runs in."""
    return format(trace.get_current_span().get_span_context().trace_id, "032x")


if __name__ == "__main__":
    server.run()

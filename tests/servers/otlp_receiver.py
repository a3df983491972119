"""A small OTLP/HTTP receiver on 127.0.0.1: what a collector gets, decoded with
`opentelemetry-proto` (installed with the OTLP exporter), kept for the test to read.

    with otlp_receiver() as receiver:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.url
        ...
        receiver.spans      # every span received: name, ids (hex), parent, attributes, status, events
        receiver.metrics    # every metric received: name → {attributes: (count, sum)}, the latest

It answers 200 with an empty export response, as a collector does.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


def value_of(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return tuple(value_of(item) for item in any_value.array_value.values)
    return getattr(any_value, kind) if kind else None


def attributes_of(pairs: Any) -> dict[str, Any]:
    return {pair.key: value_of(pair.value) for pair in pairs}


@dataclass
class Receiver:
    url: str
    spans: list[dict[str, Any]] = field(default_factory=list)
    # name → {its attributes, sorted: (count, sum)} (a counter's: (1, its value)), as last sent
    metrics: dict[str, dict[tuple[Any, ...], tuple[int, float]]] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def total(self, name: str, **where: Any) -> tuple[int, float]:
        """The count and sum of metric `name` over its points whose attributes include `where`."""
        points = [
            value for key, value in self.metrics.get(name, {}).items() if where.items() <= dict(key).items()
        ]
        return sum(count for count, _ in points), sum(value for _, value in points)

    def named(self, prefix: str) -> list[dict[str, Any]]:
        with self.lock:
            return [span for span in self.spans if span["name"].startswith(prefix)]

    def take_traces(self, body: bytes) -> None:
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        found = []
        for resource_spans in request.resource_spans:
            resource = attributes_of(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append(
                        {
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_id": span.parent_span_id.hex() or None,
                            "kind": span.kind,
                            "attributes": attributes_of(span.attributes),
                            "status": span.status.code,
                            "events": [
                                (event.name, attributes_of(event.attributes)) for event in span.events
                            ],
                            "scope": scope_spans.scope.name,
                            "service": resource.get("service.name"),
                        }
                    )
        with self.lock:
            self.spans.extend(found)

    def take_metrics(self, body: bytes) -> None:
        request = metrics_service_pb2.ExportMetricsServiceRequest()
        request.ParseFromString(body)
        with self.lock:
            for resource_metrics in request.resource_metrics:
                for scope_metrics in resource_metrics.scope_metrics:
                    for metric in scope_metrics.metrics:
                        kind = metric.WhichOneof("data")
                        points = getattr(metric, kind).data_points
                        latest = self.metrics.setdefault(metric.name, {})
                        for point in points:  # cumulative: the latest point is the total
                            key = tuple(sorted(attributes_of(point.attributes).items()))
                            latest[key] = (
                                (point.count, point.sum) if kind == "histogram" else (1, point.as_double)
                            )


@contextmanager
def otlp_receiver() -> Iterator[Receiver]:
    receiver = Receiver("")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            if self.headers.get("content-encoding") == "gzip":
                body = gzip.decompress(body)
            receiver.paths.append(self.path)
            if self.path == "/v1/traces":
                receiver.take_traces(body)
                answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
            elif self.path == "/v1/metrics":
                receiver.take_metrics(body)
                answer = metrics_service_pb2.ExportMetricsServiceResponse().SerializeToString()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join()

"""The SDK's providers and exporters, built from the environment (`telemetry.plan`), once per process.

Imported only when tracing is on. The tracer provider is made the global one, so the spans the
mcp SDK makes of its own (its `MCP send tools/call` client span, which puts the trace into
`params._meta`) land in the same trace and go to the same place. What is buffered is sent when
the block ends (`force_flush`); the SDK shuts its providers down at exit. A collector that
does not answer holds that end up to the exporter's own limit (OTEL_EXPORTER_OTLP_TIMEOUT,
10 s by default; 7 s measured against a refused port): the standard variable bounds it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..core import observe
from .watcher import OtelWatcher

if TYPE_CHECKING:
    from . import Plan

_providers: tuple[Any, Any] | None = None  # (tracer provider, meter provider), made once


def resource() -> Any:
    """`service.name` venice-agent unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise."""
    from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource

    found = Resource.create({SERVICE_VERSION: __version__})
    if str(found.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        found = found.merge(Resource({SERVICE_NAME: "venice-agent"}))
    return found


def providers(asked: Plan) -> tuple[Any, Any]:
    """The tracer and meter providers for `asked`, made (and made global) on the first call."""
    global _providers
    if _providers is not None:
        return _providers
    from opentelemetry import metrics, trace

    tracer_provider = meter_provider = None
    if asked.traces.on:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        tracer_provider = TracerProvider(resource=resource())
        for name in asked.traces.exporters:
            tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter(name)))
        trace.set_tracer_provider(tracer_provider)
    if asked.metrics.on:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

        readers = [PeriodicExportingMetricReader(metric_exporter(name)) for name in asked.metrics.exporters]
        meter_provider = MeterProvider(resource=resource(), metric_readers=readers)
        metrics.set_meter_provider(meter_provider)
    _providers = (tracer_provider, meter_provider)
    return _providers


def span_exporter(name: str) -> Any:
    if name == "console":
        import sys

        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter(out=sys.stderr)  # stdout is the answer's
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()  # endpoint, headers, timeout: the OTEL_EXPORTER_OTLP_* variables


def metric_exporter(name: str) -> Any:
    if name == "console":
        import sys

        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return ConsoleMetricExporter(out=sys.stderr)
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()


@contextmanager
def tracing(asked: Plan, secrets: Sequence[str]) -> Iterator[OtelWatcher]:
    """Runs inside the block are watched; what is buffered is sent on the way out."""
    tracer_provider, meter_provider = providers(asked)
    watcher = OtelWatcher(tracer_provider, meter_provider, content=asked.content, secrets=secrets)
    previous = observe.install(watcher)
    try:
        yield watcher
    finally:
        observe.install(previous)
        for provider in (tracer_provider, meter_provider):
            if provider is not None:
                provider.force_flush()

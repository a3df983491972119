"""OpenTelemetry traces and metrics, off unless the standard `OTEL_*` variables turn them on.

This module reads the environment only: it imports no OpenTelemetry module, so a run with
tracing off pays nothing. `traced(secrets)` turns tracing on for the block it wraps when the
environment asks (`setup.py` builds the SDK's providers and exporters; `watcher.py` turns the
run's hooks, `core/observe.py`, into spans and metrics). docs/tracing.md has the rules, the
conventions followed and the attributes.

On when, and only when (`OTEL_SDK_DISABLED=true` turns everything off):
- traces: `OTEL_TRACES_EXPORTER` names `otlp` or `console`, or it is unset and
  `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set;
- metrics: the same with `OTEL_METRICS_EXPORTER` and `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`.
The specification's default exporter is `otlp` to localhost; a terminal agent does not send to
a collector nobody named, so an explicit variable is needed. OTLP goes over HTTP/protobuf (the
`otel` extra's exporter); `grpc` is refused, said by `doctor`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..core.record import Record

SUPPORTED = ("otlp", "console")
HTTP = "http/protobuf"
DEFAULT_ENDPOINT = "http://localhost:4318"
CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CONTENT_ON = ("true", "1", "span_only", "span_and_event")


class Signal(Record):
    """Where one signal (traces or metrics) goes: its exporters, the OTLP endpoint, or why not."""

    exporters: tuple[str, ...] = ()
    endpoint: str | None = None
    problem: str | None = None

    @property
    def on(self) -> bool:
        return bool(self.exporters)

    def where(self) -> str:
        places = [self.endpoint or "" if name == "otlp" else "stderr" for name in self.exporters]
        return ", ".join(f"{name} → {place}" for name, place in zip(self.exporters, places, strict=True))


class Plan(Record):
    """What the environment asks of tracing."""

    traces: Signal = Signal()
    metrics: Signal = Signal()
    content: bool = False  # prompts, answers and tool arguments and results recorded (masked)
    disabled: bool = False  # OTEL_SDK_DISABLED=true

    @property
    def on(self) -> bool:
        return self.traces.on or self.metrics.on


def plan(environ: Mapping[str, str] | None = None) -> Plan:
    """What the `OTEL_*` variables ask for (`os.environ` by default)."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return Plan(disabled=True)
    content = env.get(CONTENT_VARIABLE, "").strip().lower() in CONTENT_ON
    return Plan(_signal(env, "TRACES"), _signal(env, "METRICS"), content)


def _signal(env: Mapping[str, str], name: str) -> Signal:
    given = env.get(f"OTEL_{name}_EXPORTER")
    own_endpoint = env.get(f"OTEL_EXPORTER_OTLP_{name}_ENDPOINT", "").strip()
    shared = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if given is None:
        names: list[str] = ["otlp"] if own_endpoint or shared else []
    else:
        names = [part.strip().lower() for part in given.split(",") if part.strip()]
        names = [part for part in names if part != "none"]
    unknown = [part for part in names if part not in SUPPORTED]
    problem = None
    if unknown:
        problem = f"OTEL_{name}_EXPORTER={','.join(unknown)} is not supported here (otlp, console)"
    names = [part for part in names if part in SUPPORTED]
    protocol = (
        env.get(f"OTEL_EXPORTER_OTLP_{name}_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or HTTP
    )
    if "otlp" in names and protocol.strip().lower() != HTTP:
        problem = f"OTLP over {protocol} is not supported here: set OTEL_EXPORTER_OTLP_PROTOCOL={HTTP}"
        names.remove("otlp")
    endpoint = None
    if "otlp" in names:
        path = f"/v1/{name.lower()}"
        endpoint = own_endpoint or (shared or DEFAULT_ENDPOINT).rstrip("/") + path
    return Signal(tuple(names), endpoint, problem)


def describe(environ: Mapping[str, str] | None = None) -> list[str]:
    """What `doctor` says of tracing: on or off, and where each signal goes."""
    asked = plan(environ)
    if asked.disabled:
        return ["off (OTEL_SDK_DISABLED=true)"]
    lines = []
    for label, signal in (("traces", asked.traces), ("metrics", asked.metrics)):
        lines.append(f"{label}: {signal.where()}" if signal.on else f"{label}: off")
        if signal.problem:
            lines.append(f"{label}: {signal.problem}")
    if asked.on:
        lines.append(
            "prompts, answers and tool arguments recorded (masked)"
            if asked.content
            else f"prompts, answers and tool arguments not recorded ({CONTENT_VARIABLE}=true records them)"
        )
        if not installed():
            lines.append("the otel extra is not installed: pip install 'venice-terminal-agent[otel]'")
    return lines


def installed() -> bool:
    """The SDK and the OTLP exporter can be imported (the `otel` extra), without importing them."""
    from importlib.util import find_spec

    try:
        return all(
            find_spec(name) is not None
            for name in ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")
        )
    except ModuleNotFoundError:
        return False


@contextmanager
def traced(secrets: Sequence[str] = (), environ: Mapping[str, str] | None = None) -> Iterator[Any]:
    """Trace the runs inside this block when the environment asks; the watcher installed, or
    None. Spans still buffered are sent on the way out."""
    asked = plan(environ)
    if not asked.on or not installed():
        yield None
        return
    from . import setup

    with setup.tracing(asked, secrets) as watcher:
        yield watcher

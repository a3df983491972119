"""Tracing from the command: off unless the OTEL_* variables say so, and then free of cost (no
OpenTelemetry module loaded); on, every front's runs are traced through the one composition root."""

from __future__ import annotations

import json
from pathlib import Path

from cli_support import clean_env, fake_venice, mcp_config, modules_after_running, run_cli
from venice_terminal_agent.telemetry import describe, plan


def test_a_question_without_mcp_servers_loads_no_opentelemetry_module(tmp_path: Path) -> None:
    with fake_venice([{"text": "Paris."}], tmp_path) as fake:
        loaded = modules_after_running(
            "--no-mcp", "capital of France?", env=clean_env(tmp_path, fake.base_url), cwd=tmp_path, full=True
        )
        assert len(fake.chat_bodies()) == 1  # the probe really asked the model
    assert "venice_terminal_agent.core.observe" in loaded
    assert not {name for name in loaded if name.startswith("opentelemetry")}


def test_with_an_mcp_server_only_the_api_the_mcp_sdk_needs_is_loaded(tmp_path: Path) -> None:
    config = mcp_config(tmp_path, paid_server=False)
    with fake_venice([{"text": "Noon."}], tmp_path) as fake:
        loaded = modules_after_running(
            "--mcp-config",
            str(config),
            "what time is it?",
            env=clean_env(tmp_path, fake.base_url),
            cwd=tmp_path,
            full=True,
        )
    assert "mcp" in loaded and "opentelemetry.trace" in loaded  # the mcp SDK's own import
    assert not {name for name in loaded if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter"))}
    assert "venice_terminal_agent.telemetry" not in {name.rsplit(".", 1)[0] for name in loaded}


def test_the_console_exporter_shows_the_question_its_request_and_its_tool_call(tmp_path: Path) -> None:
    script = [
        {"tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]},
        {"text": "It is noon."},
    ]
    config = mcp_config(tmp_path, paid_server=False)
    with fake_venice(script, tmp_path) as fake:
        done = run_cli(
            tmp_path, fake.base_url, "--mcp-config", str(config), "time?", OTEL_TRACES_EXPORTER="console"
        )
        requests = fake.requests()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("It is noon.\nstopped: answered")  # spans go to stderr
    spans = spans_in(done.stderr)
    names = [span["name"] for span in spans]
    assert "invoke_agent venice-agent" in names and names.count("chat fake-model") == 2
    [tool] = [span for span in spans if span["name"] == "execute_tool get_current_time"]
    assert tool["attributes"]["mcp.method.name"] == "tools/call"
    assert tool["attributes"]["mcp.protocol.version"] and tool["attributes"]["network.transport"] == "pipe"
    [question] = [span for span in spans if span["name"] == "invoke_agent venice-agent"]
    trace_id = question["context"]["trace_id"]
    # The mcp SDK's own client span (it puts the trace into `_meta`) is under the tool's; its
    # spans of the server's start (initialize, tools/list) are traces of their own.
    [sent] = [span for span in spans if span["name"] == "MCP send tools/call get_current_time"]
    ours = [span for span in spans if span["name"].startswith(("invoke_agent", "chat", "execute_tool"))]
    assert all(span["context"]["trace_id"] == trace_id for span in [*ours, sent])
    assert sent["parent_id"] == tool["context"]["span_id"]
    chats = [r for r in requests if r["path"].endswith("/chat/completions")]
    assert all(r["headers"]["traceparent"].split("-")[1] == trace_id.removeprefix("0x") for r in chats)


def test_run_traces_a_plan_too(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(
        json.dumps({"steps": [{"tool": "list_files", "arguments": {}}, {"answer": "listed"}]})
    )
    done = run_cli(tmp_path, "http://127.0.0.1:9", "run", str(plan_file), OTEL_TRACES_EXPORTER="console")
    assert done.returncode == 0, done.stderr
    names = [span["name"] for span in spans_in(done.stderr)]
    assert names.count("invoke_agent venice-agent") == 1 and "execute_tool list_files" in names


def spans_in(stderr: str) -> list[dict]:
    """The JSON objects the console exporter wrote, one per span."""
    decoder, spans, at = json.JSONDecoder(), [], 0
    while (start := stderr.find("{\n", at)) != -1:
        found, at = decoder.raw_decode(stderr, start)
        if "context" in found:
            spans.append(found)
    return spans


def test_the_switch_follows_the_standard_variables() -> None:
    assert not plan({}).on
    assert plan({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}).traces.endpoint == (
        "http://127.0.0.1:4318/v1/traces"
    )
    assert plan({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h/t"}).traces.endpoint == "http://h/t"
    assert not plan({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h/t"}).metrics.on
    assert not plan({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_SDK_DISABLED": "true"}).on
    assert not plan({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_TRACES_EXPORTER": "none"}).traces.on
    grpc = plan({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert not grpc.on and "grpc" in (grpc.traces.problem or "")
    assert plan({"OTEL_METRICS_EXPORTER": "console"}).metrics.exporters == ("console",)
    assert plan({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}).content
    lines = describe({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert lines[0] == "traces: otlp → http://collector:4318/v1/traces"
    assert describe({}) == ["traces: off", "metrics: off"]


def test_chat_traces_each_message_that_runs(tmp_path: Path) -> None:
    with fake_venice([{"text": "Hi."}, {"text": "Bye."}], tmp_path) as fake:
        done = run_cli(
            tmp_path, fake.base_url, "chat", "--chat", "me", "--db", "bot.db", "--no-mcp",
            stdin="hello\nhello\nbye\n", OTEL_TRACES_EXPORTER="console",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = [span["name"] for span in spans_in(done.stderr)]
    # The repeated message ran nothing, so it is no question.
    assert names.count("invoke_agent venice-agent") == 2 and names.count("chat fake-model") == 2


def doctor_tracing(tmp_path: Path, **env: str) -> str:
    with fake_venice([], tmp_path) as fake:
        done = run_cli(tmp_path, fake.base_url, "doctor", "--no-mcp", **env)
    return next(line for line in done.stdout.splitlines() if " tracing " in line)


def test_doctor_says_whether_tracing_is_on_and_where_it_goes(tmp_path: Path) -> None:
    assert doctor_tracing(tmp_path).startswith("✓ tracing")
    assert "off (set OTEL_EXPORTER_OTLP_ENDPOINT to send traces" in doctor_tracing(tmp_path)
    on = doctor_tracing(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT="http://collector.internal:4318")
    assert "traces: otlp → http://collector.internal:4318/v1/traces" in on
    assert "metrics: otlp → http://collector.internal:4318/v1/metrics" in on
    assert "not recorded (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true records them)" in on
    grpc = doctor_tracing(
        tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT="http://c:4317", OTEL_EXPORTER_OTLP_PROTOCOL="grpc"
    )
    assert grpc.startswith("✗ tracing") and "grpc is not supported here" in grpc

"""Tools that run only as MCP tasks (`execution.taskSupport: "required"`).

The mcp 2.3 client has no task helper, so this sends the protocol's own requests through the
session (`send_request` with the `mcp_types` models; the first one through its dispatcher): `tools/call` with a `task` field is
answered at once with a `CreateTaskResult`; `tasks/result` then waits for the task's end and
carries the `CallToolResult` (it is also the channel for what the task asks while it runs,
such as an elicitation); meanwhile `tasks/get` is polled at the server's `pollInterval` and
the status message reported as the call's progress. If the call is cancelled (Ctrl+C, the
question cancelled) or times out, `tasks/cancel` is sent before it ends.
Tools with optional task support keep plain calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from ..core.errors import ToolError
from ..core.events import ProgressReport

DEFAULT_POLL = 1.0  # seconds between status checks when the server suggests none
CANCEL_TIMEOUT = 5.0


def needs_task(tools: Sequence[Any], name: str) -> bool:
    tool = next((tool for tool in tools if tool.name == name), None)
    return getattr(getattr(tool, "execution", None), "task_support", None) == "required"


async def call_as_task(
    client: Any, tool: str, arguments: dict[str, Any], limit: float, report: ProgressReport | None
) -> Any:
    """Run `tool` as a task to its end; its `CallToolResult`, or a `ToolError` that says why not."""
    import mcp_types as types

    session = client.session
    params = types.CallToolRequestParams(
        name=tool, arguments=arguments, task=types.TaskMetadata(ttl=int(limit * 1000))
    )
    # `send_request` checks a `tools/call` answer against `CallToolResult` whatever the request
    # asked, so the mcp 2.3 client cannot receive a `CreateTaskResult` that way: the request
    # goes through the session's dispatcher, and the answer is checked here.
    raw = await session._dispatcher.send_raw_request(
        "tools/call", params.model_dump(by_alias=True, mode="json", exclude_none=True), {"timeout": limit}
    )
    created = types.CreateTaskResult.model_validate(raw, by_name=False)
    task = created.task
    ask: dict[str, Any] = {"task_id": task.task_id}

    async def watch() -> None:
        current = task
        with suppress(Exception):  # a status check that fails only ends the status line
            while True:
                if report is not None:
                    report(None, None, _status_line(current))
                await asyncio.sleep((current.poll_interval or DEFAULT_POLL * 1000) / 1000)
                current = await session.send_request(
                    types.GetTaskRequest(params=types.GetTaskRequestParams(**ask)),
                    types.GetTaskResult,
                    request_read_timeout_seconds=limit,
                )

    watcher = asyncio.create_task(watch())
    try:
        async with asyncio.timeout(limit):
            result = await session.send_request(
                types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(**ask)),
                types.CallToolResult,
                request_read_timeout_seconds=limit,
            )
    except BaseException as error:
        cancel = asyncio.ensure_future(
            session.send_request(
                types.CancelTaskRequest(params=types.CancelTaskRequestParams(**ask)),
                types.CancelTaskResult,
                request_read_timeout_seconds=CANCEL_TIMEOUT,
            )
        )
        # Shielded: the task is cancelled on the server even when this call was cancelled here.
        with suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(cancel), CANCEL_TIMEOUT)
        if isinstance(error, TimeoutError):  # ours; the SDK's own timeout is an MCPError
            raise ToolError(
                f"{tool} (a task) did not finish within {limit:g} s (the per-call timeout, MCP_CALL_TIMEOUT); it was cancelled"
            ) from None
        raise
    finally:
        watcher.cancel()
    return result


def _status_line(task: Any) -> str:
    message = " ".join((task.status_message or "").split())
    status = task.status.replace("_", " ")
    return f"task {status}: {message}" if message else f"task {status}"

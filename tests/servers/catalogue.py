"""A big MCP catalogue: 300 tools over 20 services, as a hub of SaaS connectors lists them.

In memory: `build_server()`. Over stdio: `python tests/servers/catalogue.py`. Each tool is
`<service>_<action>_<object>` (e.g. `github_create_issue`) with a title, a description of a
sentence or two and an input schema of three to five described properties: about the size of
real connector tools. No tool is annotated read-only, so every call asks. A call answers
`<name> ran with <arguments as JSON>`.
"""

from __future__ import annotations

import json

import anyio
import mcp.types as t
from mcp import MCPError
from mcp.server import Server

SERVICES = {
    "github": ("issue", "pull_request", "repository"),
    "slack": ("message", "channel", "reminder"),
    "jira": ("ticket", "sprint", "board"),
    "gmail": ("email", "draft", "label"),
    "calendar": ("event", "attendee", "room"),
    "drive": ("file", "folder", "permission"),
    "notion": ("page", "database", "block"),
    "stripe": ("invoice", "customer", "refund"),
    "shopify": ("order", "product", "discount"),
    "salesforce": ("lead", "opportunity", "account"),
    "zendesk": ("support_case", "macro", "agent"),
    "hubspot": ("contact", "deal", "campaign"),
    "trello": ("card", "list", "checklist"),
    "asana": ("task", "project", "milestone"),
    "dropbox": ("document", "share_link", "backup"),
    "twilio": ("sms", "call_log", "phone_number"),
    "mailchimp": ("newsletter", "audience", "template"),
    "airtable": ("record", "table", "view"),
    "linear": ("bug", "cycle", "roadmap"),
    "figma": ("design", "comment", "component"),
}
ACTIONS = {
    "create": "Create a new {object} in {service}",
    "get": "Get one {object} from {service} by its id, with every field",
    "list": "List the {object}s in {service}, newest first, with paging",
    "update": "Change the fields of an existing {object} in {service}",
    "delete": "Delete a {object} from {service} for good; this cannot be undone",
}


def tool_list() -> list[t.Tool]:
    tools = []
    for service, objects in SERVICES.items():
        for thing in objects:
            words = thing.replace("_", " ")
            for action, sentence in ACTIONS.items():
                description = (
                    sentence.format(object=words, service=service.capitalize())
                    + f". Needs a {service.capitalize()} connection; the answer is JSON."
                )
                properties: dict = {
                    "workspace": {
                        "type": "string",
                        "description": f"The {service} workspace or account to act in",
                    },
                    f"{thing}_id": {"type": "string", "description": f"The id of the {words}"},
                    "fields": {
                        "type": "object",
                        "description": f"The {words}'s fields to set, by name (title, body, owner, due date…)",
                        "additionalProperties": True,
                    },
                }
                if action == "list":
                    properties = {
                        "workspace": properties["workspace"],
                        "query": {"type": "string", "description": f"Only {words}s matching these words"},
                        "limit": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": 100,
                            "description": "How many to list",
                        },
                        "cursor": {"type": "string", "description": "Where the previous page ended"},
                    }
                tools.append(
                    t.Tool(
                        name=f"{service}_{action}_{thing}",
                        title=f"{service.capitalize()}: {action} {words}",
                        description=description,
                        input_schema={"type": "object", "properties": properties, "required": ["workspace"]},
                    )
                )
    return tools


def build_server() -> Server:
    tools = tool_list()
    names = {tool.name for tool in tools}

    async def list_tools(ctx, params: t.PaginatedRequestParams | None) -> t.ListToolsResult:
        return t.ListToolsResult(tools=tools)

    async def call_tool(ctx, params: t.CallToolRequestParams) -> t.CallToolResult:
        if params.name not in names:
            raise MCPError(code=t.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        arguments = json.dumps(params.arguments or {}, sort_keys=True)
        return t.CallToolResult(content=[t.TextContent(text=f"{params.name} ran with {arguments}")])

    return Server("catalogue", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def _serve(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve, build_server())

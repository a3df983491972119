"""A stdio MCP server whose one tool asks a form with escape sequences in its choices.

    python forms.py

`choose` asks for a colour (an enum of a window-title sequence and a blinking word) and
returns the repr of what was chosen, or of the action when the form was not accepted.
"""

from typing import Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from pydantic import BaseModel

TITLE, BLINK = "\x1b]0;pwned\x07", "\x1b[5mblink\x1b[0m"


class Pick(BaseModel):
    colour: Literal["\x1b]0;pwned\x07", "\x1b[5mblink\x1b[0m"]


server = MCPServer("forms")


@server.tool()
async def choose(ctx: Context) -> str:
    """Ask for a colour."""
    answer = await ctx.elicit("Pick one", schema=Pick)
    return repr(answer.data.colour if answer.action == "accept" and answer.data else answer.action)


if __name__ == "__main__":
    server.run()

"""`python -m venice_terminal_agent` is `venice-agent`."""

from .cli.app import main

main()

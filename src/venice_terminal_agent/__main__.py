"""`python -m venice_terminal_agent` is `venice-agent`."""

from .cli.start import main

main()

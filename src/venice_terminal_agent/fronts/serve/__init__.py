"""The chat bot as an HTTP service: the API (`app.py`), streaming (`sse.py`) and the chat page
(`page.html`). The `venice-agent serve` command that starts it is `cli/serve_cmd.py`."""

"""The chat bot as an HTTP service: the API (`api.py`), streaming (`sse.py`) and the chat page
(`page.html`). The `venice-agent serve` command that starts it is `fronts/serve/serve_main.py`."""

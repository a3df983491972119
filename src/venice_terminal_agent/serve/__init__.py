"""The chat bot as an HTTP service: the API (`app.py`), streaming (`sse.py`), start-up
(`main.py`, the `venice-agent serve` command) and the chat page (`page.html`)."""

"""The terminal front: one-shot `venice-agent "question"`, the REPL, `chat` and `run`, with Rich
rendering, the terminal approver and forms."""

"""The garbage collector around start-up: off while the command starts (`cli/start.py`), on again
once it is ready (`started`). A module of its own, importing nothing of ours: the entry point,
the runtime and the commands all use it, and the entry point imports every command."""

import gc


def started() -> None:
    """Start-up is over: what it built stays for the run, frozen (never scanned again), and the
    collector is on again. Every command that goes on running calls it once it is ready: the
    runtime for a question, the REPL, `serve` and the fronts; `serve` and `chat` without a model
    too, which never open the runtime and so ran with the collector off for their whole life."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()

"""A stdio "server" that reads everything and never answers, not even `initialize`.

It says one thing on stderr first, as a stuck server would (Apify retrying its API, say).

With a path argument (a FIFO), it first writes "up" there, so a test knows it is running.
"""

import sys

print("mute: still warming up", file=sys.stderr, flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as fifo:
        fifo.write("up\n")

for _line in sys.stdin:
    pass

"""A stdio "server" that reads everything and never answers, not even `initialize`."""

import sys

for _line in sys.stdin:
    pass

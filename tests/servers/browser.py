"""A stand-in for the user's web browser: follows the authorisation URL to wherever it leads.

    BROWSER=/path/to/a/wrapper venice-agent login NAME   (the wrapper runs this with the URL)

The authorisation server approves at once and redirects to the agent's loopback listener,
which is what a user clicking "Allow" in a real browser does.
"""

import sys

import httpx2

page = httpx2.get(sys.argv[1], follow_redirects=True, timeout=30)
print(f"browser: {page.status_code} {page.text[:200]}", file=sys.stderr)

"""Run a command beside the fake model server (`cli_support.fake_venice`), both inside whatever
network namespace this script was started in (`servers.node.in_loopback_namespace`), where the
command can reach the server on loopback and nothing else.

argv: SCRIPT (the fake server's JSON script) FOLDER (its requests go to FOLDER/requests.jsonl)
COMMAND…; `{base_url}` in the command is the server's base URL. Its output is the command's,
its exit status too.
"""

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for cli_support

from cli_support import fake_venice


def main() -> int:
    script, folder, *command = sys.argv[1:]
    with fake_venice(json.loads(script), Path(folder)) as fake:
        done = subprocess.run([part.replace("{base_url}", fake.base_url) for part in command], check=False)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())

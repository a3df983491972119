"""The conformance suite's server scenarios against the real `venice-agent mcp --http`, all in
whatever network namespace this script was started in (`servers.node.in_loopback_namespace`):
the fake model server, the command and the suite's runner reach each other on loopback only.

argv: FOLDER NODE PINNED NEXT SCENARIO…; PINNED and NEXT are the two releases' `conformance`
scripts; a scenario `next:NAME` runs from NEXT, `NAME@VERSION` with `--spec-version VERSION`.
Each scenario's results go to FOLDER/<its index>; the runner's exit status is not ours.
"""

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for cli_support

from cli_support import fake_venice, http_front


def main() -> int:
    folder, node, pinned, next_release, *scenarios = sys.argv[1:]
    root = Path(folder)

    def run(index: int, scenario: str, url: str) -> None:
        runner = next_release if scenario.startswith("next:") else pinned
        name, _, version = scenario.removeprefix("next:").partition("@")
        command = [node, runner, "server", "--url", url, "--scenario", name, "-o", str(root / str(index))]
        if version:
            command += ["--spec-version", version]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        (root / f"{index}.log").write_text(done.stdout + done.stderr)

    with fake_venice({"replies": [{"text": "Hello."}], "loop": True}, root) as fake:
        with http_front(root, fake.base_url, "--no-mcp") as url:
            with ThreadPoolExecutor(4) as pool:
                for future in [pool.submit(run, i, s, url) for i, s in enumerate(scenarios)]:
                    future.result()
    return 0


if __name__ == "__main__":
    sys.exit(main())

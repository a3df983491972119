"""mutmut's type-check pass: mypy as CI runs it, over the mutated copy (issue 39).

CI fails on any mypy error (.ci/run), so a mutant mypy rejects could never land: mutmut counts
it caught without running its tests. mutmut reads mypy's JSON lines; this drops two kinds that
mutmut's own layout causes, whatever the mutant: `unused-ignore`, on the `# type: ignore` lines
it writes between functions (strict modules warn on unused ignores), which belong to no mutant
and would stop the run; and `no-redef`, since every copy of a method that annotates an attribute
(`self._issued: set[str] = ...` in each of `__init__`'s mutants) annotates it again, which would
count every `__init__` mutant caught.
Run by mutmut from mutants/ as `python tests/mutation/mypy_gate.py mypy` ("mypy" tells mutmut
which report format to read).
"""

import json
import subprocess
import sys

ARTIFACTS = {"unused-ignore", "no-redef"}

done = subprocess.run([sys.executable, "-m", "mypy", "-O", "json"], capture_output=True, text=True)
for line in done.stdout.splitlines():
    if line.strip() and json.loads(line).get("code") not in ARTIFACTS:
        print(line)

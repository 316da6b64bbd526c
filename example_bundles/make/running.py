"""Run the agents' code for real, and write what a shell would have shown.

The examples do not mock command output: the analysis script, the pytest
run, the probes and the simulation are executed in a scratch folder and
their real output is stored.  Only what would differ between machines is
normalised: the scratch path is replaced by the agent's working directory
(``alias``) and the environment is pinned.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path


def run_script(files: dict[str, bytes], argv: list[str], *, alias: str,
               isolated: bool = True, env: dict[str, str] | None = None
               ) -> tuple[int, str, dict[str, bytes]]:
    """Really run Python in a scratch folder holding ``files``.

    Returns the exit status, stdout+stderr with the scratch path replaced by
    ``alias``, and every new file.  ``isolated`` adds ``-I -S`` so that
    site-packages cannot change the outcome (the missing-dependency failure is
    then the same on every machine).
    """
    with tempfile.TemporaryDirectory(prefix="rb-example-") as tmp:
        root = Path(tmp)
        for rel, data in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        flags = ["-I", "-S"] if isolated else ["-B"]
        proc = subprocess.run([sys.executable, *flags, *argv], cwd=root, capture_output=True,
                              text=True, check=False,
                              env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", **(env or {})})
        out = (proc.stdout + proc.stderr).replace(str(root.resolve()), alias).replace(tmp, alias)
        produced = {p.relative_to(root).as_posix(): p.read_bytes()
                    for p in sorted(root.rglob("*")) if p.is_file()
                    and p.relative_to(root).as_posix() not in files
                    and "__pycache__" not in p.parts}
    return proc.returncode, out, produced


def shell_transcript(command: str, output: str, code: int) -> bytes:
    """The ``command_output`` payload: prompt line, output, exit status."""
    return f"$ {command}\n{output}[exit status {code}]\n".encode()

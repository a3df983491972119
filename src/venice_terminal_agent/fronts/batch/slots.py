"""Where the workers of one host stand: each process holds a slot (a lock file in the user's data
folder, one folder per batch database) for its life, and its DBOS executor id is `HOST-SLOT`.
A worker started after one died takes the lowest free slot, so DBOS hands it that worker's
unfinished questions; a live worker takes over the questions of any slot on its host whose
lock no process holds. The kernel lets go of a lock when its process dies, kill -9 included."""

from __future__ import annotations

import fcntl
import hashlib
import socket
from pathlib import Path
from typing import IO


def data_folder() -> Path:
    from platformdirs import user_data_path

    from ...core.defaults import APP_NAME

    return user_data_path(APP_NAME, appauthor=False) / "batch"


class Slot:
    """This process's worker slot on this host, held by a lock file for its life."""

    def __init__(self, url: str) -> None:
        self.folder = data_folder() / "slots" / hashlib.sha256(url.encode()).hexdigest()[:12]
        self.folder.mkdir(parents=True, exist_ok=True)
        self.host = socket.gethostname() or "host"
        self.number, self.file = self.take()

    def take(self) -> tuple[int, IO[bytes]]:
        number = 1
        while True:
            held = self.try_lock(number)
            if held is not None:
                return number, held
            number += 1

    def try_lock(self, number: int) -> IO[bytes] | None:
        file = open(self.folder / f"{number}.lock", "ab")  # held for the process's life
        try:
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            file.close()
            return None
        return file

    @property
    def executor(self) -> str:
        return f"{self.host}-{self.number}"

    def dead(self, executor: str) -> IO[bytes] | None:
        """The lock of `executor`'s slot when no process holds it (its worker died), else None."""
        host, _, number = executor.rpartition("-")
        if host != self.host or not number.isdigit() or int(number) == self.number:
            return None
        return self.try_lock(int(number))

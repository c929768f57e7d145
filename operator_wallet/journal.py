"""The wallet's state file: an append-only journal of its records (``operator_wallet.wallet``),
one JSON object a line, replayed at start so that a restarted wallet keeps its books.

Writes are grouped, not made per call: ``append`` queues a record, and the queue is written with
one ``write(2)`` as soon as the event loop is free, so every call of one loop turn shares it. A
call's answer waits for ``written()``: an answer is sent only once the records it may depend on
are in the file, so a killed process loses no answer it gave. ``fsync`` runs every
``SYNC_SECONDS`` in a thread and at ``close``: a machine that loses power loses at most that
much."""

import asyncio
import json
import os

SYNC_SECONDS = 1.0
_encode = json.JSONEncoder(separators=(",", ":")).encode


class JournalError(RuntimeError):
    """The state file cannot be read back: a line other than the last is not a record."""


def read(path):
    """The records of the journal at ``path`` (a list; empty when the file does not exist).

    A last line cut short (a write the process did not finish) is dropped and cut from the file.
    Raises ``JournalError`` on any other line that is not a JSON object."""
    if not os.path.exists(path):
        return []
    with open(path, "rb") as file:
        data = file.read()
    records, start = [], 0
    while start < len(data):
        end = data.find(b"\n", start)
        line = data[start:] if end < 0 else data[start:end]
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not an object")
        except ValueError as error:
            if end >= 0 and data[end + 1:].strip():
                raise JournalError(f"{path}: byte {start}: not a record ({error})") from None
            os.truncate(path, start)
            break
        if end < 0:
            os.truncate(path, start)  # a complete object without its newline is still a torn write
            break
        records.append(record)
        start = end + 1
    return records


class Journal:
    """Appends records to the file at ``path``; with ``path`` None, keeps nothing (a wallet in
    memory only). ``start()`` and ``close()`` run on the event loop that serves the calls."""

    def __init__(self, path=None):
        self._fd = None if path is None else os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._queue = []
        self._pending = None  # the future of the queued write, resolved once it is done
        self._dirty = False  # written since the last fsync
        self._syncer = None

    async def start(self):
        if self._fd is not None:
            self._syncer = asyncio.get_running_loop().create_task(self._sync_every())

    def append(self, record):
        """Queue ``record`` (a dict of JSON values) for the next write."""
        if self._fd is None:
            return
        self._queue.append(_encode(record))
        if self._pending is None:
            loop = asyncio.get_running_loop()
            self._pending = loop.create_future()
            loop.call_soon(self._write)

    async def written(self):
        """Return once every record appended so far is written (raises the write's ``OSError``)."""
        if self._pending is not None:
            await asyncio.shield(self._pending)

    def truncate(self):
        """Write what is queued, then empty the file."""
        self._write()
        if self._fd is not None:
            os.ftruncate(self._fd, 0)

    async def close(self):
        """Write what is queued, fsync, close."""
        if self._syncer is not None:
            self._syncer.cancel()
        self._write()
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None

    def _write(self):
        pending, self._pending = self._pending, None
        if not self._queue:
            return
        data = ("\n".join(self._queue) + "\n").encode()
        self._queue.clear()
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as error:
            pending.set_exception(error)
            raise
        self._dirty = True
        pending.set_result(None)

    async def _sync_every(self):
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(SYNC_SECONDS)
            if self._dirty:
                self._dirty = False
                await loop.run_in_executor(None, os.fsync, self._fd)

"""The hub's stdio transport: the MCP SDK's stdio client, with a reader and a stderr log that hold up.

The SDK's ``stdio_client`` (mcp/client/stdio.py) re-splits its whole buffer on every chunk (a 20 MB result
took about 12 s, 60 MB 95 s and 850 MB of memory), drops a message pydantic-core refuses (a lone surrogate
escape), so its request waits out the timeout, logs a traceback for every line of stdout that is not JSON,
and gives the server's stderr a file that grows without limit. ``stdio_transport`` is a drop-in for it (an
async context manager yielding the SDK Client's read and write streams) that keeps its process handling (a
new session, the default environment, the spec's shutdown sequence: close stdin, wait, kill the process
group) and replaces the rest: stdout is cut into lines by ``stdio_lines`` and read by ``stdio_reader``
(one bad line fails its call, never the connection), stderr goes through a pipe to a ``CappedLog``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectSendStream
from mcp import StdioServerParameters
from mcp.client._transport import TransportStreams
from mcp.client.stdio import _stop_server_process, get_default_environment
from mcp.shared.message import SessionMessage

from .capped_log import CappedLog
from .stdio_lines import read_lines
from .stdio_reader import MessageReader, StdoutNoise

__all__ = ["DEFAULT_MAX_RESULT_BYTES", "STDERR_LOG_BYTES", "StdoutNoise", "stdio_transport"]

log = logging.getLogger(__name__)

DEFAULT_MAX_RESULT_BYTES = 32 * 1024 * 1024
"""The longest message (one line of JSON) a stdio server may send unless its ``maxResultBytes`` says."""

STDERR_LOG_BYTES = 10 * 1024 * 1024
"""What a server's stderr log may take on disk: the current file and one rotated file, half each."""

_WRITER_FLUSH_TIMEOUT = 0.5  # as the SDK: time to write messages already accepted before stdin closes
_STDERR_FLUSH_TIMEOUT = 0.5  # time for the server's last words to reach the log after it stopped
# Longer than the SDK's stop sequence (close stdin, 2 s, SIGTERM, SIGKILL), which closes stdout at its end.
_DISCARD_TIMEOUT = 10.0


@contextlib.asynccontextmanager
async def stdio_transport(
    params: StdioServerParameters,
    *,
    server: str,
    log_path: Path,
    max_line_bytes: int = DEFAULT_MAX_RESULT_BYTES,
    noise: StdoutNoise | None = None,
) -> AsyncIterator[TransportStreams]:
    """Start the server and yield the streams of SessionMessages an ``mcp.Client`` talks over.

    Args:
        params: the command, arguments, extra environment and working directory.
        server: the server's name, for messages.
        log_path: where its stderr goes (capped at ``STDERR_LOG_BYTES``, rotated to ``<name>.1``).
        max_line_bytes: the longest message accepted; a longer answer fails its request at once.
        noise: counts stdout lines that are not JSON-RPC (shared across restarts by the caller).

    Raises:
        OSError: the command cannot be started (FileNotFoundError when it does not exist).
    """
    reader = MessageReader(server, max_line_bytes, noise if noise is not None else StdoutNoise())
    stderr_done = asyncio.Event()
    with contextlib.ExitStack() as undo:  # a start that fails leaves no file open
        capped = CappedLog(log_path, STDERR_LOG_BYTES // 2)  # before the spawn: a failed start has a log too
        undo.callback(capped.close)
        err_read, err_write = os.pipe()
        undo.callback(os.close, err_read)
        try:
            process = await anyio.open_process(
                [params.command, *params.args],
                env=get_default_environment() | (params.env or {}),
                stderr=err_write,
                cwd=params.cwd,
                start_new_session=True,  # a kernel interrupt (SIGINT to the kernel's group) must not reach it
            )
        finally:
            os.close(err_write)  # the child has its copy: the pipe ends when the server (and its children) do
        undo.pop_all()  # from here the drain thread owns both
    _drain_stderr(err_read, capped, asyncio.get_running_loop(), stderr_done)

    # No awaits between the spawn and the task group (as in the SDK): a cancellation there would leak it.
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    shutting_down = False
    writer_done = anyio.Event()
    to_server = write_stream.clone()  # the reader's own way to stdin: answers to requests it refused

    async def stdout_reader(tg: anyio.abc.TaskGroup) -> None:
        assert process.stdout is not None
        try:
            async with read_writer, contextlib.aclosing(read_lines(process.stdout, max_line_bytes)) as lines:
                async for line in lines:
                    message = reader.read(line)  # never raises: a bad line fails its request, not the reading
                    for reply in reader.take_replies():  # in a task: the reader never waits on stdin
                        tg.start_soon(_send_quietly, to_server, SessionMessage(reply))
                    if message is None:
                        continue
                    try:
                        await read_writer.send(message)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        break  # the session is gone (shutdown): drain below so the server can exit
                else:
                    return  # end of stdout: the server closed it or exited
        except anyio.ClosedResourceError:
            return  # our own shutdown closed stdout under the read
        except Exception:
            # The read stream is closed by now: waiting calls fail with CONNECTION_CLOSED at once and the
            # next call starts the server again, instead of every answer being dropped from here on.
            if not shutting_down:
                log.exception("reading the stdout of MCP server %r failed; its connection is closed", server)
            return
        await _discard(process.stdout)

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for session_message in write_reader:
                    reader.sent(session_message.message)
                    line = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(line.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server may still run: end the read side so no request waits for an answer forever.
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()  # unblocks the reader into its drain, so a server stuck writing can exit
        write_stream.close()
        to_server.close()
        with anyio.move_on_after(_WRITER_FLUSH_TIMEOUT):
            await writer_done.wait()
        # The SDK's own shutdown sequence (private, pinned to mcp<3; every hub test closes a server with it).
        await _stop_server_process(process)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stderr_done.wait(), _STDERR_FLUSH_TIMEOUT)
        for stream in (read_stream, write_stream, to_server, read_writer, write_reader):
            await stream.aclose()
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader, tg)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):  # must finish even when cancelled, or the server leaks
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()


def _drain_stderr(fd: int, capped: CappedLog, loop: asyncio.AbstractEventLoop, done: asyncio.Event) -> None:
    """Copy the pipe ``fd`` to ``capped`` on a daemon thread until every writer has closed it.

    A thread, not the event loop: it keeps reading after the transport is gone (the server's last words,
    a child that still writes), and a slow disk never stalls the hub's loop.
    """

    def run() -> None:
        writable = True
        try:
            while chunk := os.read(fd, 1 << 16):
                if not writable:
                    continue  # keep reading: a full pipe would block the server on its next write
                try:
                    capped.write(chunk)
                except OSError as exc:
                    writable = False
                    log.warning("cannot write the stderr log %s (%s); the rest is dropped", capped.path, exc)
        finally:
            os.close(fd)
            capped.close()
            with contextlib.suppress(RuntimeError):  # the hub's loop has already stopped
                loop.call_soon_threadsafe(done.set)

    threading.Thread(target=run, name=f"stderr-{capped.path.name}", daemon=True).start()


async def _send_quietly(stream: MemoryObjectSendStream[SessionMessage], message: SessionMessage) -> None:
    """Send ``message`` to the server unless the connection is closing."""
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        await stream.send(message)


async def _discard(stream: anyio.abc.ByteReceiveStream) -> None:
    """Read and drop what is left on stdout, so a server blocked writing it can see stdin close and exit.

    Shielded (the shutdown that needs it may be cancelled) but bounded: a child of the server that keeps
    stdout open after the server is gone must not hold the transport forever.
    """
    ended = (
        anyio.EndOfStream,
        anyio.ClosedResourceError,
        anyio.BrokenResourceError,
        ConnectionError,
        OSError,
    )
    with anyio.CancelScope(shield=True), anyio.move_on_after(_DISCARD_TIMEOUT), contextlib.suppress(*ended):
        while True:
            await stream.receive()

"""Replace a file's contents all at once: readers see the old file or the new one, never half of either.

The state code mode keeps beside a workspace (trust store, kernel state, run history, inferred shapes) is
read by other processes while it is written; a temporary file in the same directory (created 0600 by
``mkstemp``) renamed over the target gives them that.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(path: Path, text: str, *, prefix: str = ".codemode-", sync: bool = False) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file renamed over it.

    ``sync`` flushes it to disk before the rename, for a file whose loss after a crash would cost the
    user something (the trust store). On failure the temporary file is removed and the error raised.
    """
    fd, temp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            if sync:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise

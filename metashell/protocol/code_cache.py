"""Compiled generated code, kept across runs, as Python keeps ``.pyc`` files for modules.

The decoders, encoders and JSON writers are generated from the bundled schemas when a record type
is first met (``codegen``, ``kafka_json``).  Writing their source takes a few milliseconds;
compiling it took about 35 ms of every one-shot command on the pure-Python engine.  So the code
objects are cached under a checksum of their source (and file name, and the interpreter's bytecode
magic number): the source is still generated from the schemas each run, which keeps one
semantics, but it is compiled once per interpreter and schema change.  Each entry holds its source
too, compared in full before its code is used, so the file name only has to find the entry: CRC32
and Adler-32 from ``zlib`` (which every load imports) instead of ``hashlib``, whose OpenSSL
binding took 4 ms of each start.

The cache lives in ``$METASHELL_CODE_CACHE``, else ``$XDG_CACHE_HOME/metashell/code`` or
``~/.cache/metashell/code``; ``METASHELL_CODE_CACHE=off`` turns it off.  It never touches a
metadata directory.  A file that cannot be read, or does not hold a code object, is compiled
again and replaced; one that cannot be written is skipped: a cache never decides an answer.
Like ``__pycache__``, it trusts the user's own cache directory.
"""

from __future__ import annotations

import marshal
import os
import zlib
from functools import cache
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType

ENV = "METASHELL_CODE_CACHE"


@cache
def cache_dir() -> Path | None:
    """Where compiled code is kept, or None when the cache is off."""
    chosen = os.environ.get(ENV)
    if chosen:
        return None if chosen.lower() in ("off", "0", "no") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "metashell" / "code"


def compiled(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")``, from the cache when this exact source was seen."""
    where = cache_dir()
    if where is None:
        return compile(source, filename, "exec")
    path = where / f"{entry_name(source, filename)}.code"
    try:
        entry = marshal.loads(path.read_bytes())
        if (
            isinstance(entry, tuple)
            and len(entry) == 2
            and entry[0] == source
            and isinstance(entry[1], CodeType)
            and entry[1].co_filename == filename
        ):
            return entry[1]
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, filename, "exec")
    _store(path, marshal.dumps((source, code)))
    return code


def entry_name(source: str, filename: str) -> str:
    """The cache file's name for ``source`` compiled as ``filename`` by this interpreter: 64 bits of
    checksum and the length (an entry found under it is still compared with ``source``)."""
    data = MAGIC_NUMBER + filename.encode() + b"\0" + source.encode()
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}-{len(data):x}"


def _store(path: Path, data: bytes) -> None:
    """Write atomically (another process may read the same key), or not at all."""
    import tempfile  # only when something new was compiled: a one-shot start does not pay for it

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass

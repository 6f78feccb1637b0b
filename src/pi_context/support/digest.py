"""SHA-1 and SHA-256 hex digests without importing ``hashlib``.

``hashlib`` loads OpenSSL's ``_hashlib`` first (about 3 ms here); a ``pi-context tool`` call
needs two small digests per call (a project's folder name, the cache file's name), so it uses
the interpreter's own modules (``_sha1``, ``_sha256``, or ``_sha2`` from 3.12 on) when they
exist, and ``hashlib`` when they do not. The digests are the same either way.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable

_found: dict[str, Callable[[bytes], object]] = {}


def _constructor(name: str, modules: tuple[str, ...]) -> Callable[[bytes], object]:
    made = _found.get(name)
    if made is None:
        for module in (*modules, "hashlib"):
            try:
                made = getattr(importlib.import_module(module), name)
                break
            except (ImportError, AttributeError):
                continue
        assert made is not None, "hashlib always has sha1 and sha256"
        _found[name] = made
    return made


def sha1_hex(data: bytes) -> str:
    """``hashlib.sha1(data).hexdigest()``."""
    return str(_constructor("sha1", ("_sha1",))(data).hexdigest())  # type: ignore[attr-defined]


def sha256_hex(data: bytes) -> str:
    """``hashlib.sha256(data).hexdigest()``."""
    made = _constructor("sha256", ("_sha2", "_sha256"))
    return str(made(data).hexdigest())  # type: ignore[attr-defined]

"""The notes root and its five homes, laid out exactly as the TypeScript extension does.

Layout under the root (``PI_NOTES_HOME``, default ``~/.agents/notes``), shared with
pi-context 0.26's note store so a Python host and the extension see one memory::

    pi/session/<session id>/   session: this Pi session only
    project/<name>-<sha1 8>/   project: the git repository (or directory) of the work
    human/                     human: the person, across every project and agent
    agents/<agent slug>/       agent: ``PI_NOTES_AGENT`` (else the host's agent name)
    models/<model slug>/       model: the model id without its provider prefix, or ``default``

Slugs are lowercase ``[a-z0-9]`` runs joined by single dashes (empty becomes ``root``). The
project key is the base name of the repository root plus the first 8 hex digits of the SHA-1
of its absolute path; every linked git worktree of one repository shares the main checkout's
key. A session id must be one plain directory name or the session home is unavailable.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Mapping
from pathlib import Path

from pi_context.bindings.notes.note_address import SCOPES as SCOPES
from pi_context.support.digest import sha1_hex
from pi_context.support.frozen import frozen, replace
from pi_context.support.jsonlimits import JSONLimitError, check_depth
from pi_context.support.regular import NotRegularFile, open_regular, read_bounded, read_regular
from pi_context.support.surrogates import SURROGATE

ENV_VAR = "PI_NOTES_HOME"
AGENT_ENV_VAR = "PI_NOTES_AGENT"
DEFAULT_MODEL_SLUG = "default"

_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_BAD_COMPONENT = re.compile(r"[\\/\0:]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
POINTER_LIMIT = 64 * 1024  # a ``.git`` file holds one ``gitdir:`` line
HEADER_LIMIT = 1 << 20  # a session header line is far smaller
HEADER_CHUNK = 4096  # what is read first to find it


class HomeUnavailableError(ValueError):
    """A scope's home cannot be located (unknown scope, or the identity it needs is absent)."""


def default_root() -> Path:
    return Path.home() / ".agents" / "notes"


def notes_root(explicit: Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """The notes root: ``explicit``, else ``$PI_NOTES_HOME``, else ``~/.agents/notes``."""
    env = os.environ if environ is None else environ
    chosen = (
        explicit if explicit is not None else (Path(env[ENV_VAR]) if env.get(ENV_VAR) else None)
    )
    root = chosen.expanduser() if chosen is not None else default_root()
    return root.absolute()


def slugify(value: str) -> str:
    """The extension's home-name form: lowercase ``[a-z0-9]`` runs joined by ``-``."""
    cleaned = _NOT_SLUG.sub("-", value.lower()).strip("-")
    return cleaned or "root"


def model_slug(model_id: str | None) -> str:
    """The model home's name: the id after its last ``/`` (the provider prefix goes), slugged
    as the extension does (so ``vendor/`` is ``root``); no model id is ``default``."""
    if not model_id:
        return DEFAULT_MODEL_SLUG
    return slugify(model_id.rsplit("/", 1)[-1])


def agent_slug(agent_name: str, environ: Mapping[str, str] | None = None) -> str:
    """``PI_NOTES_AGENT`` when set (what the extension reads), else the host's agent name.

    Set means present, as the extension's ``??`` reads it: an empty value slugs to ``root``.
    """
    env = os.environ if environ is None else environ
    chosen = env.get(AGENT_ENV_VAR)
    return slugify(agent_name if chosen is None else chosen)


def _repository_root(directory: Path) -> Path:
    """The main checkout behind ``directory/.git`` (a linked worktree resolves to it).

    Only a regular ``.git`` file is read as a pointer, and only its first ``POINTER_LIMIT``
    bytes: a FIFO, a device or a link to one is never opened (``directory`` is the root)."""
    marker = directory / ".git"
    try:
        info = os.stat(marker)
    except OSError:
        return directory
    if not stat.S_ISREG(info.st_mode):
        return directory
    try:
        pointer = read_regular(marker, POINTER_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return directory
    found = re.search(r"^gitdir:\s*(.+)$", pointer, re.M)
    if not found:
        return directory
    target = Path(os.path.normpath(directory / found.group(1).strip()))
    parts = target.parts
    # <main>/.git/worktrees/<name>: every worktree of one repository shares one key.
    if len(parts) >= 3 and parts[-2] == "worktrees" and parts[-3] == ".git":
        return Path(*parts[:-3])
    return directory


def git_root(cwd: Path) -> Path | None:
    current = Path(os.path.abspath(cwd))
    while True:
        if os.path.lexists(current / ".git"):
            return _repository_root(current)
        if current.parent == current:
            return None
        current = current.parent


PROJECT_KEYS_MAX = 64
"""Working directories whose project key is kept (all are dropped when it is reached)."""
RACY_NS = 2_000_000_000
"""A pointer file changed this recently may change again within its time stamps' resolution."""
Proof = tuple[object, ...]
_project_keys: dict[str, tuple[Proof, str]] = {}


def project_key(cwd: Path) -> str:
    """``<base name>-<sha1 of the absolute root, 8 hex>`` of the repository root (or ``cwd``).

    A resident host asks this on every call: the answer is kept per absolute ``cwd`` with
    the proof it rests on (``_marker_proof``), taken before the answer was worked out, and
    reused only while that proof is unchanged."""
    text = os.path.abspath(cwd)
    proof = _marker_proof(text)
    held = _project_keys.get(text)
    if held is not None and proof is not None and held[0] == proof:
        return held[1]
    absolute = Path(text)
    root = git_root(absolute) or absolute
    digest = sha1_hex(str(root).encode("utf-8", "surrogateescape"))[:8]
    key = f"{root.name}-{digest}"
    if proof is not None:
        if len(_project_keys) >= PROJECT_KEYS_MAX:
            _project_keys.clear()
        _project_keys[text] = (proof, key)
    return key


def _marker_proof(absolute: str) -> Proof | None:
    """What ``git_root`` of ``absolute`` depends on, as ``lstat`` sees it: each level's
    ``.git`` absent, up to the first that exists, and that one's identity (of the name, and
    of what it leads to; for a regular file, whose ``gitdir:`` pointer is read, its size and
    time stamps too). The answer is a function of the path text and these alone. None when
    it cannot be proven: a level that cannot be examined, or a pointer file changed within
    ``RACY_NS`` (a rewrite in the same tick would not show)."""
    out: list[object] = []
    current = absolute
    while True:
        marker = os.path.join(current, ".git")
        try:
            info = os.lstat(marker)
        except FileNotFoundError:
            out.append(None)
        except OSError:
            return None
        else:
            out.append(_identity(info))
            if stat.S_ISLNK(info.st_mode):
                try:
                    info = os.stat(marker)
                except OSError:
                    return None
                out.append(_identity(info))
            if stat.S_ISREG(info.st_mode):
                if max(info.st_ctime_ns, info.st_mtime_ns) >= time.time_ns() - RACY_NS:
                    return None
                out.append((info.st_size, info.st_mtime_ns, info.st_ctime_ns))
            return tuple(out)
        parent = os.path.dirname(current)
        if parent == current:
            return tuple(out)
        current = parent


def _identity(info: os.stat_result) -> tuple[int, int, int]:
    return (info.st_dev, info.st_ino, stat.S_IFMT(info.st_mode))


def session_id_from_file(path: Path) -> str:
    """The session id from a Pi session file's header (its first non-empty JSONL line).

    Only a regular file is read (a FIFO or a device is refused at once), and only its first
    ``HEADER_LIMIT`` bytes; a header nesting deeper than ``MAX_DEPTH`` is refused by name."""
    try:
        fd, _info = open_regular(path)
        try:
            # A header is one short line: the file is read from its start in growing
            # pieces until its first non-empty line ends (a resident host asks this on
            # every call of a large session), never past ``HEADER_LIMIT``.
            size = HEADER_CHUNK
            while True:
                data = read_bounded(fd, size)
                if size >= HEADER_LIMIT or len(data) < size or _first_line_ends(data):
                    break
                size = min(size * 16, HEADER_LIMIT)
        finally:
            os.close(fd)
    except NotRegularFile as exc:
        raise HomeUnavailableError(f"{path} is {exc.kind}, not a session file") from exc
    except OSError as exc:
        raise HomeUnavailableError(f"cannot read session file {path}: {exc.strerror}") from exc
    start = 0
    while True:  # line by line from the start: a header is one short line of a large read
        end = data.find(b"\n", start)
        last = end < 0
        line = (data[start:] if last else data[start:end]).decode("utf-8", "replace").strip()
        if not line:
            if last:
                break
            start = end + 1
            continue
        if len(data) == HEADER_LIMIT and last:
            raise HomeUnavailableError(
                f"{path}: its first line is longer than {HEADER_LIMIT:,} bytes (the limit "
                "for a session header)"
            )
        try:
            check_depth(line)
            header = json.loads(line)
        except JSONLimitError as exc:
            raise HomeUnavailableError(f"{path}: its first line {exc}") from exc
        except (json.JSONDecodeError, RecursionError):
            break
        if (
            isinstance(header, dict)
            and header.get("type") == "session"
            and isinstance(header.get("id"), str)
            and header["id"]
        ):
            return str(header["id"])
        break
    raise HomeUnavailableError(
        f"{path} is not a Pi session file: its first line is not a "
        '{"type":"session","id":...} header'
    )


def _first_line_ends(data: bytes) -> bool:
    """Whether the first non-empty line of ``data`` (as the header parse below reads lines:
    decoded, stripped) ends within it, so reading further cannot change the answer."""
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            return False
        if data[start:end].decode("utf-8", "replace").strip():
            return True
        start = end + 1


def _session_component(session_id: str) -> str | None:
    """Why ``session_id`` cannot be a directory name, or ``None`` when it can: a separator,
    ``.``/``..``, a control character (a newline in a folder name) or a lone surrogate (no
    file name encodes it as text) is refused, never turned into a name."""
    if session_id in (".", "..") or _BAD_COMPONENT.search(session_id):
        return "it is not one plain directory name"
    if _CONTROL.search(session_id):
        return "it holds a control character"
    if SURROGATE.search(session_id):
        return "it holds a lone UTF-16 surrogate"
    if len(session_id.encode("utf-8", "surrogatepass")) > 255:
        return "it is longer than 255 bytes"
    return None


@frozen
class NotesHomes:
    """Where each scope's notes live for one host identity."""

    root: Path
    session_id: str | None
    project_root: Path
    agent_name: str
    model_id: str | None
    session_error: str | None = None
    """Why the session id could not be read, when a session file was given but is unusable."""
    agent_home: str | None = None
    """A named agent home (``@agents/<slug>/``) to use instead of the running agent's."""
    model_home: str | None = None
    """A named model home (``@models/<slug>/``) to use instead of the running model's."""

    def slug(self, scope: str) -> str | None:
        """The name of the agent or model home this identity addresses (else ``None``)."""
        if scope == "agent":
            return self.agent_home or agent_slug(self.agent_name)
        if scope == "model":
            return self.model_home or model_slug(self.model_id)
        return None

    def running_slug(self, scope: str) -> str | None:
        """The running agent's or model's slug, whatever home this identity names."""
        return replace(self, agent_home=None, model_home=None).slug(scope)

    def named(self, scope: str, who: str | None) -> NotesHomes:
        """This identity with ``scope``'s home replaced by the home named ``who``."""
        if who is None:
            return self
        if scope == "agent":
            return replace(self, agent_home=who)
        if scope == "model":
            return replace(self, model_home=who)
        raise HomeUnavailableError(f"the {scope} home has no named variants")

    def parts(self, scope: str) -> tuple[str, ...]:
        """The home's folders below the root (each one plain name)."""
        if scope == "session":
            if not self.session_id:
                if self.session_error:
                    raise HomeUnavailableError(
                        f"the session home is unavailable: {self.session_error}"
                    )
                raise HomeUnavailableError(
                    "the session home is unavailable: this host has no session id "
                    "(pass --session FILE to the CLI)"
                )
            problem = _session_component(self.session_id)
            if problem:
                raise HomeUnavailableError(
                    f"the session home is unavailable: session id {self.session_id[:80]!r} "
                    f"cannot name a folder ({problem})"
                )
            return ("pi", "session", self.session_id)
        if scope == "project":
            return ("project", project_key(self.project_root))
        if scope == "human":
            return ("human",)
        if scope in ("agent", "model"):
            return ("agents" if scope == "agent" else "models", str(self.slug(scope)))
        raise HomeUnavailableError(f"unknown scope {scope!r}; expected one of {', '.join(SCOPES)}")

    def home(self, scope: str) -> Path:
        return self.root.joinpath(*self.parts(scope))

    def available(self) -> tuple[str, ...]:
        """The scopes this identity can address, in canonical order."""
        out: list[str] = []
        for scope in SCOPES:
            try:
                self.parts(scope)
            except HomeUnavailableError:
                continue
            out.append(scope)
        return tuple(out)

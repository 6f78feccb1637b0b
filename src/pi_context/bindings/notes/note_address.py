"""Note addresses: the one public name of a note, in the TypeScript extension's grammar.

Pure syntax, no filesystem access. Every notes tool reads its ``path`` argument with
``parse_address``, and every place that shows a note to the model (tool results, listings,
the boot's pocket, map headers and pointers) writes it with ``format_address``, so whatever
is shown can be passed back verbatim.

The grammar (pi-context's ``src/notes/address.ts``, see ``docs/interop.md``)::

    <vpath>                  this session's note
    @project/<vpath>         the project's note
    @human/<vpath>           the human's note, across projects
    @self/<vpath>            the running agent's note
    @model/<vpath>           the running model's note
    @agents/<slug>/<vpath>   a named agent's note (how listings show the running agent's)
    @models/<slug>/<vpath>   a named model's note (how listings show the running model's)

The word after ``@`` is always a home name, never a user-chosen one: any other word, a
missing ``/<vpath>``, or an ``@`` anywhere in the vpath is refused. There is no fallback from
one home to another. The vpath itself obeys ``address.validate_path`` (relative, no ``..``,
no backslash…) and is canonicalised by ``address.note_path`` (NFC, ``.md`` appended).

A listing never shows the relative forms ``@self/`` and ``@model/``: it names the running
agent's and model's homes by their slugs, so a listing alone tells every home apart, and
each name it shows is itself an address.
"""

from __future__ import annotations

import re

from pi_context.bindings.notes.address import NoteAddressError, note_path
from pi_context.support.frozen import frozen

SCOPES: tuple[str, ...] = ("session", "project", "human", "agent", "model")
"""The five homes, in the order listings and the boot walk them."""

RELATIVE_HEADS: dict[str, str] = {
    "project": "project",
    "human": "human",
    "self": "agent",
    "model": "model",
}
"""``@<head>/<vpath>``: the home each one-word head names."""

NAMED_HEADS: dict[str, str] = {"agents": "agent", "models": "model"}
"""``@<head>/<slug>/<vpath>``: homes named by a slug at the second level."""

HEAD_OF_SCOPE: dict[str, str] = {"project": "project", "human": "human"}
NAMED_HEAD_OF_SCOPE: dict[str, str] = {"agent": "agents", "model": "models"}
RUNNING_HEAD_OF_SCOPE: dict[str, str] = {"agent": "self", "model": "model"}
"""How listings name the running agent's and model's own homes (the newest contract)."""

ADDRESS_FORMS = (
    "legal prefixes are @project/, @human/, @self/ and @model/ (and @agents/<name>/, "
    "@models/<name>/ as listings show them); a bare path is this session's note"
)
"""The one sentence every address error ends with."""

ADDRESS_HELP = (
    "A note is named by its address: a bare path (checkpoint/progress.md) is this session's "
    "note; @project/<path> is this project's, @human/<path> the human's across projects, "
    "@self/<path> your own as the running agent and @model/<path> the running model's. "
    "Listings name your and your model's homes @agents/<name>/ and @models/<name>/; those "
    "addresses work as given. Any other @ prefix, or an @ inside the path, is refused; an "
    "address never falls back to another home."
)
"""How the tools and the boot explain addresses to the model."""

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
"""A home name under ``agents/`` or ``models/``: lowercase runs joined by single dashes."""


class InvalidAddressError(NoteAddressError):
    """A note address does not follow the grammar; the message names what is wrong."""


@frozen
class NoteAddress:
    """A parsed address: the home (``scope``), the canonical vpath, and a named slug.

    ``who`` is ``None`` for the running agent's or model's home (``@self/``, ``@model/``) and
    for the homes that have no name; ``@agents/<slug>/`` sets it to ``slug``.
    """

    scope: str
    path: str
    who: str | None = None


def _refuse(value: str, why: str) -> InvalidAddressError:
    shown = value if len(value) <= 120 else value[:117] + "..."
    return InvalidAddressError(f"invalid note address {shown!r}: {why}; {ADDRESS_FORMS}")


def parse_address(value: object) -> NoteAddress:
    """The home and canonical vpath ``value`` names, or ``InvalidAddressError``.

    A vpath error that is not about the grammar (``..``, a backslash, a too-long name…) is
    the ``NoteAddressError`` of ``address.note_path``, naming the vpath.
    """
    if not isinstance(value, str):
        raise InvalidAddressError(f"a note address must be a string; {ADDRESS_FORMS}")
    scope, who, vpath = "session", None, value
    if value.startswith("@"):
        head, slash, tail = value[1:].partition("/")
        if head in RELATIVE_HEADS:
            scope, vpath = RELATIVE_HEADS[head], tail
        elif head in NAMED_HEADS:
            who, slash, vpath = tail.partition("/")
            if not SLUG.match(who):
                raise _refuse(value, f"@{head}/ must be followed by a home name and a path")
            scope = NAMED_HEADS[head]
        elif head == "":
            raise _refuse(value, "an @ must be followed by a home name")
        else:
            raise _refuse(value, f"@{head} is not a notes home")
        if not slash or vpath == "":
            raise _refuse(value, "the home is not followed by /<path>")
    return NoteAddress(scope, address_path(vpath, value), who)


def address_path(vpath: object, address: object = None) -> str:
    """``vpath`` canonical (``address.note_path``) if an address can carry it, else an error.

    The one rule an address adds to a plain vpath: no ``@`` in it. A note file whose name
    has one is not addressable (the store lists it as refused).
    """
    if isinstance(vpath, str) and "@" in vpath:
        whole = address if isinstance(address, str) else vpath
        raise _refuse(whole, "an @ may only start an address, never appear inside its path")
    return note_path(vpath)


def format_address(
    scope: str, path: str, who: str | None = None, running: str | None = None
) -> str:
    """The address listings show for ``path`` in ``scope``; ``who`` names agent/model homes.

    ``running`` is the running agent's or model's slug: that home's notes are shown as
    ``@self/…`` and ``@model/…``, as the extension's listings show them from ``a508f68``; any
    other agent or model home is named by its slug (``@agents/<slug>/…``). Without ``running``
    every agent and model home is named by its slug (the earlier listing form).
    ``parse_address(format_address(s, p, w))`` gives back ``(s, p, w)`` for every canonical
    ``p`` and slug ``w`` (with ``running``, ``(s, p, None)`` for the running home).
    """
    if scope == "session":
        return path
    if running is not None and who == running and scope in RUNNING_HEAD_OF_SCOPE:
        return f"@{RUNNING_HEAD_OF_SCOPE[scope]}/{path}"
    head = HEAD_OF_SCOPE.get(scope)
    if head is not None:
        return f"@{head}/{path}"
    named = NAMED_HEAD_OF_SCOPE.get(scope)
    if named is None:
        raise ValueError(f"unknown notes home {scope!r}; expected one of {', '.join(SCOPES)}")
    if who is None or not SLUG.match(who):
        raise ValueError(f"the {scope} home's address needs its slug, got {who!r}")
    return f"@{named}/{who}/{path}"


def with_scope_alias(address: NoteAddress, given: str, scope: object) -> NoteAddress:
    """Apply the tools' ``scope`` argument (an alias kept for older callers) to an address.

    With a bare path, ``scope`` picks the home (``path=x.md, scope=project`` is
    ``@project/x.md``). With a prefixed address both must name the same home, else
    ``InvalidAddressError`` says which two disagree.
    """
    if scope is None:
        return address
    if not isinstance(scope, str) or scope not in SCOPES:
        raise InvalidAddressError(f"scope must be one of {', '.join(SCOPES)}")
    if not given.startswith("@"):
        return NoteAddress(scope, address.path)
    if scope != address.scope:
        raise InvalidAddressError(
            f"the address {given!r} names the {address.scope} home but scope is {scope!r}; "
            "pass one of them, or both naming the same home"
        )
    return address


@frozen
class PatternTarget:
    """Which homes a listing pattern selects, and the glob left for the paths inside them.

    ``scope`` is ``None`` when the pattern names no home (it applies within every home);
    ``who`` is a glob over home names for ``@agents/<glob>/`` and ``@models/<glob>/`` (a
    plain slug names one home), ``None`` for the running agent's or model's.
    """

    scope: str | None
    who: str | None
    glob: str


def parse_pattern(pattern: str) -> PatternTarget:
    """Split a listing pattern: ``@project/plan/*`` is ``plan/*`` within the project home.

    A pattern without ``@`` is a glob over the paths of every home; ``@<home>/<glob>``
    narrows to that home, as the extension does. Any other ``@`` start is
    ``InvalidAddressError`` with the address grammar's meaning.
    """
    if not pattern.startswith("@"):
        return PatternTarget(None, None, pattern)
    head, slash, tail = pattern[1:].partition("/")
    if head in RELATIVE_HEADS:
        scope, who, glob = RELATIVE_HEADS[head], None, tail
    elif head in NAMED_HEADS:
        scope = NAMED_HEADS[head]
        who, slash, glob = tail.partition("/")
        if who == "" or "@" in who:
            raise _refuse(pattern, f"@{head}/ must be followed by a home name (or a glob)")
    else:
        raise _refuse(pattern, f"@{head} is not a notes home" if head else "an @ must name a home")
    if not slash or glob == "":
        raise _refuse(pattern, "the home is not followed by /<glob>")
    return PatternTarget(scope, who, glob)

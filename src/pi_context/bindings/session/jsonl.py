"""JSON exactly as Pi's Node runtime reads and writes it.

Pi writes every line with ``JSON.stringify`` and reads it with ``JSON.parse``. Python's ``json``
differs in ways that change bytes: float spelling (``1.0`` vs ``1``, ``1e16`` vs
``10000000000000000``), integers beyond 2**53 (JS rounds them to doubles), integer-like object keys
(JS enumerates them first, ascending), lone surrogates (JS escapes them), and ``NaN``/``Infinity``
literals (Python accepts them, JS rejects the line). This module is the one place that knows.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator

from pi_context.support.jsonlimits import (
    JSONLimitError,
    check_depth,
    too_deep_message,
)
from pi_context.support.surrogates import escape

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

_MAX_SAFE_INT = 2**53
_MAX_DEPTH = 100_000
_ESCAPE = json.encoder.encode_basestring


class JSONLineError(ValueError):
    """A line that ``JSON.parse`` would reject."""


# ---------------------------------------------------------------------------------------------
# numbers


def js_number(value: float | int) -> str:
    """Spell a number the way ``JSON.stringify`` does (Number::toString; non-finite is null)."""
    if isinstance(value, int):
        if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "null"
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + (int(exp_text) if exp_text else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        exponent = n - 1
        text = (
            digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if exponent >= 0 else "-")
        )
        text += str(abs(exponent))
    return sign + text


def _js_int(text: str) -> int | float:
    """JSON.parse turns every number into a double: long integers lose precision there too."""
    if len(text.lstrip("-")) <= 15:
        return int(text)
    as_float = float(text)
    if as_float.is_integer() and abs(as_float) <= _MAX_SAFE_INT:
        return int(as_float)
    return as_float


_JSON_WS = " \t\n\r"
_scan_once = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _reject_constant(name: str) -> Any:
    raise JSONLineError(f"{name} is not valid JSON")


# ---------------------------------------------------------------------------------------------
# strings and keys


def _quote(text: str) -> str:
    # JS keeps a well-formed pair as one code point and escapes a lone surrogate.
    return escape(_ESCAPE(text))


def _is_array_index(key: str) -> bool:
    if not key or not key.isascii() or not key.isdigit():
        return False
    return (key == "0" or key[0] != "0") and int(key) < 4294967295


def _ordered_items(obj: dict[Any, Any]) -> list[tuple[str, Any]]:
    """JS objects enumerate array-index keys first (ascending), then strings by insertion."""
    items = [(k if isinstance(k, str) else str(k), v) for k, v in obj.items()]
    if any(_is_array_index(k) for k, _ in items):
        index = sorted((it for it in items if _is_array_index(it[0])), key=lambda it: int(it[0]))
        return index + [it for it in items if not _is_array_index(it[0])]
    return items


# ---------------------------------------------------------------------------------------------
# encoding


def _plain(value: Any) -> bool:
    """True when the C encoder already writes what JS would: no floats, no integers beyond
    2**53, no array-index-like keys (lone surrogates are fixed afterwards)."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_MAX_SAFE_INT <= value <= _MAX_SAFE_INT)
    if kind is list:
        return all(map(_plain, value))
    if kind is dict:
        for key in value:
            if type(key) is not str or (key[:1].isdigit() and _is_array_index(key)):
                return False
        return all(map(_plain, value.values()))
    return False


_C_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


def encode(value: Any) -> str:
    """``JSON.stringify(value)`` for plain JSON data.

    Plain data goes through the C encoder; anything with numbers or keys that JS spells
    differently goes through an iterative encoder (deep nesting cannot overflow either way).
    """
    try:
        fast = _plain(value)
    except RecursionError:
        fast = False
    if fast:
        try:
            out: str = _C_DUMPS(value)
        except RecursionError:
            return _encode_js(value)
        return escape(out)
    return _encode_js(value)


def _encode_js(value: Any) -> str:
    parts: list[str] = []
    # Each frame: [iterator, is_object, first_item_pending]
    stack: list[list[Any]] = []

    def emit(v: Any) -> None:
        if v is None:
            parts.append("null")
        elif v is True:
            parts.append("true")
        elif v is False:
            parts.append("false")
        elif isinstance(v, str):
            parts.append(_quote(v))
        elif isinstance(v, int | float):
            parts.append(js_number(v))
        elif len(stack) > _MAX_DEPTH:
            raise ValueError("value nested too deeply (or circular) to encode as JSON")
        elif isinstance(v, dict):
            parts.append("{")
            stack.append([iter(_ordered_items(v)), True, True])
        elif isinstance(v, list | tuple):
            parts.append("[")
            stack.append([iter(v), False, True])
        else:
            raise TypeError(f"cannot encode {type(v).__name__} as JSON")

    emit(value)
    while stack:
        frame = stack[-1]
        it: Iterator[Any] = frame[0]
        try:
            item = next(it)
        except StopIteration:
            parts.append("}" if frame[1] else "]")
            stack.pop()
            continue
        if frame[2]:
            frame[2] = False
        else:
            parts.append(",")
        if frame[1]:
            key, val = item
            parts.append(_quote(key))
            parts.append(":")
            emit(val)
        else:
            emit(item)
    return "".join(parts)


def encode_line(value: Any) -> bytes:
    """One JSONL line as Pi writes it: compact JSON, UTF-8, terminated by ``\\n``."""
    return (encode(value) + "\n").encode("utf-8")


# ---------------------------------------------------------------------------------------------
# decoding


def parse(text: str) -> Any:
    """``JSON.parse(text)``; raises JSONLineError where JS would throw, or where the text
    nests deeper than ``jsonlimits.MAX_DEPTH`` (JS would parse it; we refuse, naming the limit).

    Integers beyond 2**53 stay exact in memory but encode exactly as JS prints the rounded
    double, so bytes round-trip either way; only digit strings too long for ``int`` (and the
    JS-invalid constants Python would accept) need the slow, hooked parse.
    """
    try:
        check_depth(text)
        if "NaN" in text or "Infinity" in text:
            return json.loads(text, parse_int=_js_int, parse_constant=_reject_constant)
        body = text.strip(_JSON_WS)
        try:
            value, end = _scan_once(body, 0)  # json.loads minus its per-call overhead
        except StopIteration as exc:
            raise JSONLineError(f"no JSON value at column {exc.value + 1}") from None
        except json.JSONDecodeError:
            raise
        except ValueError:  # an integer literal longer than Python's int-parsing limit
            return json.loads(text, parse_int=_js_int, parse_constant=_reject_constant)
        if end != len(body):
            raise JSONLineError(f"extra data at column {end + 1}")
        return value
    except JSONLineError:
        raise
    except JSONLimitError as exc:
        raise JSONLineError(str(exc)) from None
    except RecursionError as exc:
        raise JSONLineError(too_deep_message()) from exc
    except ValueError as exc:  # JSONDecodeError is a ValueError
        raise JSONLineError(str(exc)) from exc


def parse_line(line: bytes) -> Any:
    """``JSON.parse`` of one raw UTF-8 line; raises JSONLineError (or UnicodeDecodeError).

    msgspec parses a well-formed line several times faster than ``json`` and gives the same
    values (exact big integers, last duplicate key wins). It refuses everything that needs care
    (invalid UTF-8, lone surrogate escapes, a byte-order mark, NaN, numbers that overflow a
    double, deep nesting); those lines take ``parse``, which decides exactly as before.
    """
    from .decoders import FAST_DECODE, FAST_DECODE_ERRORS

    try:
        return FAST_DECODE(line)
    except FAST_DECODE_ERRORS:
        pass
    return parse(line.decode("utf-8"))


# ---------------------------------------------------------------------------------------------
# dates

_ISO = re.compile(
    r"^([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?"
    r"(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?)?$"
)
_MAX_TIME_MS = 8.64e15


def js_date_ms(value: Any) -> int | None:
    """``new Date(value).getTime()``: epoch ms, or None where JS yields NaN.

    Strings follow the ECMAScript date-time format (the format Pi writes); V8's legacy fallback
    formats are not recognised and count as invalid. A date-time without an offset is local time.
    """
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        if not math.isfinite(value) or abs(value) > _MAX_TIME_MS:
            return None
        return int(value)
    if not isinstance(value, str):
        return None
    match = _ISO.match(value)
    if match is None:
        return None
    year_text, month, day, hour, minute, second, frac, offset = match.groups()
    if year_text == "-000000":
        return None
    from datetime import UTC, datetime, timedelta  # here: most callers never parse a date

    try:
        year = int(year_text)
        mo, d = int(month or 1), int(day or 1)
        h, mi, s = int(hour or 0), int(minute or 0), int(second or 0)
        ms = int((frac or "0")[:3].ljust(3, "0"))
        end_of_day = h == 24 and mi == 0 and s == 0 and ms == 0
        if not (1 <= mo <= 12 and 1 <= d <= 31 and (h < 24 or end_of_day) and mi < 60 and s < 60):
            return None
        if not 1 <= year <= 9999:
            return None  # outside Python's calendar; Pi never writes such years
        base = datetime(year, mo, d, 0 if end_of_day else h, mi, s)
        if end_of_day:
            base += timedelta(days=1)
    except ValueError:
        return None
    if offset is None and hour is not None:
        local = base.astimezone()  # naive -> the machine's local zone, as JS does
        stamp = int(local.timestamp() * 1000) // 1000 * 1000
        return stamp + ms
    delta = base.replace(tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)
    total = (delta.days * 86400 + delta.seconds) * 1000 + ms
    if offset and offset != "Z":
        sign = 1 if offset[0] == "+" else -1
        total -= sign * (int(offset[1:3]) * 60 + int(offset[4:6])) * 60000
    return total if abs(total) <= _MAX_TIME_MS else None


def iso_from_ms(ms: int) -> str:
    """``new Date(ms).toISOString()`` for years 0001-9999."""
    from datetime import UTC, datetime, timedelta

    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """``String.prototype.trim``: JS and Python disagree on what whitespace is."""
    return text.strip(_JS_WHITESPACE)


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a parsed JSON value."""
    if value is None or value is False:
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value == value and value != 0  # NaN and 0 are falsy
    if isinstance(value, str):
        return value != ""
    return True

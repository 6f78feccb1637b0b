"""The one format of a tool's error result, as every host shows it: a JSON object with an
``error`` message and the fields the tool echoes, every number finite.

A tool family that answers a plain-text error, or echoes a non-finite number it was sent
(``json`` writes ``NaN``/``Infinity``, which is not JSON), is brought into that format here, so
the MCP server and ``pi-context tool`` answer alike.
"""

from __future__ import annotations

import json
import math

from pi_context.bindings.tool_output import JSONValue, fit_json


def finite(value: JSONValue) -> JSONValue:
    """``value`` with every non-finite number written as its JavaScript spelling (a string):
    still an echo of what was sent, and JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [finite(item) for item in value]
    return value


def error_text(text: str) -> str:
    """An error result's ``text`` in the one format (``{"error": text}`` for plain text)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = None
    if not (isinstance(value, dict) and isinstance(value.get("error"), str)):
        return fit_json({"error": text})
    if "NaN" not in text and "Infinity" not in text:
        return text
    return fit_json(finite(value))

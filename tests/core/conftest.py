from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import strategies as st

from pi_context.spec.model import Spec
from pi_context.statemachine.reset_control import ResetControl, committed_specs, reset_control


@pytest.fixture(scope="session")
def specs() -> dict[str, Spec]:
    return {spec.id: spec for spec in committed_specs()}


@pytest.fixture(scope="session")
def gens(specs: dict[str, Spec]) -> dict[str, ResetControl]:
    return {spec_id: reset_control(spec) for spec_id, spec in specs.items()}


# Wire values for the wire-path properties (test_wire_step, test_wire_fast_path).
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1, 2),
    st.floats(0, 1),
    st.sampled_from(["w1", "w2", "manual", "automatic", "idle", "pending", "none"]),
    st.sampled_from(["close-out", "tool-requested", "turn_end", "x" * 300, ""]),
    st.lists(st.integers(), max_size=1),
    st.dictionaries(st.sampled_from(["a", "phase", "type"]), st.just("none"), max_size=1),
)


def corrupt(value: Any, data: st.DataObject) -> Any:
    """The value with one leaf replaced, one key dropped or one key added, somewhere."""
    value = copy.deepcopy(value)
    node = value
    while True:
        keys = list(node)
        if not keys:
            return value
        key = data.draw(st.sampled_from(keys))
        child = node[key]
        if isinstance(child, dict) and data.draw(st.booleans()):
            node = child
            continue
        action = data.draw(st.sampled_from(["replace", "drop", "add"]))
        if action == "replace":
            node[key] = data.draw(json_leaf)
        elif action == "drop":
            del node[key]
        else:
            name = data.draw(st.sampled_from(["extra", "windowId", "source", "facts", "phase"]))
            node[name] = data.draw(json_leaf)
        return value

"""``pi-context demo --handoff`` end to end, checked with the real Pi: the destination opens in
Pi's ``SessionManager`` with ``parentSession`` set, and Pi's own branch of the source at the
packet's leaf reproduces the packet's digest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from pi_context.bindings.handoff.relay import branch_digest
from pi_context.bindings.session import Session


def test_demo_handoff_against_real_pi(pi_branch: Any, tmp_path: Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pi_context",
            "demo",
            "--windows",
            "7",
            "--handoff",
            "--json",
            "--quiet",
            "--dir",
            str(tmp_path / "demo"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    handoff = out["handoff"]
    assert handoff["result"] == "done"
    packet = handoff["packet"]
    source, destination = Path(packet["source"]["file"]), Path(handoff["destination"])
    assert source == Path(out["session"])
    assert handoff["report"]["handoff"]["verdict"] == "verified"
    assert {n["kind"] for n in packet["state"]["notes"]} == {"goal", "constraint", "open_item"}

    on_leaf, dest, whole_source = pi_branch(
        [
            {"path": str(source), "leaf": packet["source"]["leafId"]},
            {"path": str(destination)},
            {"path": str(source)},
        ]
    )
    assert "error" not in on_leaf and "error" not in dest, (on_leaf, dest)
    # Pi's getBranch() of the source at the packet's leaf hashes to the packet's digest
    assert on_leaf["digest"] == packet["source"]["digest"]
    assert on_leaf["branchIds"][-1] == packet["source"]["leafId"]
    # Pi opens the destination, parented on the source file, with our entries on its branch
    assert dest["header"]["parentSession"] == str(source)
    ours = Session.open(destination, readonly=True)
    assert dest["branchIds"] == [e["id"] for e in ours.branch()]
    assert dest["sessionId"] == ours.session_id and dest["messages"] > 0
    # the source's latest entry (Pi's leaf) is the offer; its digest matches ours too
    source_session = Session.open(source, readonly=True)
    assert whole_source["leafId"] == source_session.leaf_id
    assert whole_source["digest"] == branch_digest(source_session.branch())

    report = subprocess.run(
        [sys.executable, "-m", "pi_context", "session", "report", str(destination)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.returncode == 0 and "handoff: verified" in report.stdout

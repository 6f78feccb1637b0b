"""What a warm ``pi-context tool history_search`` imports (the start-up budget of
``benchmarks/cli_start.py``, held here as behaviour, not timing): with the index built, the
call reads no session line, so neither the fast line decoder (``msgspec``, with the
``inspect``/``ast``/``uuid``/``decimal`` it imports) nor ``dataclasses``, ``random``,
``tempfile`` or ``threading`` is loaded; nor ``typing`` (our modules import it only for the type
checker) or ``datetime`` (dates are parsed only where a date is read, and the index's SQLite
driver is taken without the ``sqlite3`` package's date adapters: ``support/sqlite.py``). The
cold call that builds the index does load the decoder. (On a session this small the index
re-digests the whole file on every call, which imports ``hashlib``; the benchmark, on 100k
entries, checks that it stays off too.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SESSION = REPO / "tests" / "fixtures" / "pi-sessions" / "named-seed.jsonl"
OFF_THE_WARM_PATH = (
    "msgspec",
    "dataclasses",
    "inspect",
    "ast",
    "uuid",
    "random",
    "tempfile",
    "threading",
    "typing",
    "datetime",
)

CALL = """
import json, sys
from pi_context.cli import main
code = main(["tool", "history_search", "--session", sys.argv[1], "--args", sys.argv[2]])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def call(session: Path) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", CALL, str(session), json.dumps({"query": "a", "limit": 5})],
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def test_the_warm_call_imports_only_what_it_uses(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    shutil.copyfile(SESSION, session)
    an_hour_ago = time.time() - 3600  # a file written just now is re-verified on each call
    os.utime(session, (an_hour_ago, an_hour_ago))
    code, cold = call(session)  # builds the index
    assert code == 0
    assert "msgspec" in cold  # the build decodes lines
    code, warm = call(session)
    assert code == 0
    assert sorted(warm & set(OFF_THE_WARM_PATH)) == []

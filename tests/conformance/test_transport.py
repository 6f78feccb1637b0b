"""The transport never hangs: crashes, hangs, partial lines and floods are reported."""

from __future__ import annotations

import shlex
import sys
import time

import pytest

from pi_context.checks.conformance import transport
from pi_context.checks.conformance.transport import Implementation, ImplementationFailure

PY = shlex.quote(sys.executable)


def script(code: str) -> str:
    return f"{PY} -c {shlex.quote(code)}"


ECHO = script(
    "import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line)\n"
    "    sys.stdout.buffer.flush()"
)


def test_pipelined_requests_do_not_deadlock_on_full_pipes() -> None:
    # 40,000 requests (about 1.5 MB) written before any reply is read: far more than a pipe
    # buffer holds in either direction.
    lines = [f'{{"n":{i},"pad":"{"x" * 24}"}}\n'.encode() for i in range(40_000)]
    with Implementation(ECHO, timeout=10) as impl:
        impl.send(lines)
        got = [impl.receive(f"line {i}") for i in range(len(lines))]
    assert got == [line.rstrip(b"\n") for line in lines]


def test_an_exit_is_a_crash_with_status_and_stderr() -> None:
    crash = script("import sys\nsys.stdin.readline()\nsys.stderr.write('kaput\\n')\nsys.exit(7)")
    with Implementation(crash, timeout=10) as impl, pytest.raises(ImplementationFailure) as err:
        impl.request(b'{"op":"hello"}\n', "hello")
    assert err.value.kind == "crash"
    assert "exited with status 7 before replying to hello" in err.value.message
    assert "stderr: kaput" in err.value.message


def test_silence_is_a_hang_within_the_timeout() -> None:
    mute = script("import sys, time\nsys.stdin.readline()\ntime.sleep(60)")
    impl = Implementation(mute, timeout=0.5, startup_timeout=0.8)
    started = time.monotonic()
    with pytest.raises(ImplementationFailure) as err:
        impl.request(b'{"op":"hello"}\n', "hello")
    assert time.monotonic() - started < 5
    assert err.value.kind == "hang"
    assert "no reply to hello within 0.8s of starting" in err.value.message
    assert not impl.running


def test_a_slow_start_is_not_a_hang_but_a_slow_reply_is() -> None:
    slow = script(
        "import sys, time\ntime.sleep(1.0)\nfor line in sys.stdin:\n"
        "    if 'slow' in line: time.sleep(2)\n    print(line.strip(), flush=True)"
    )
    with Implementation(slow, timeout=0.5, startup_timeout=20) as impl:
        assert impl.request(b"first\n", "first") == b"first"  # waited for the start-up
        assert impl.request(b"second\n", "second") == b"second"
        with pytest.raises(ImplementationFailure) as err:
            impl.request(b"slow\n", "third")
    assert err.value.kind == "hang"
    assert "no reply to third within 0.5s, after 2 replies since it started" in err.value.message
    assert "the implementation and every process it started were stopped" in err.value.message


def test_a_last_line_without_newline_is_still_a_reply() -> None:
    partial = script("import sys\nsys.stdin.readline()\nsys.stdout.write('{\"ok\":true}')")
    with Implementation(partial, timeout=10) as impl:
        assert impl.request(b'{"op":"hello"}\n', "hello") == b'{"ok":true}'


def test_an_endless_line_is_a_protocol_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transport, "MAX_LINE", 1000)
    flood = script(
        "import sys, time\nsys.stdin.readline()\nsys.stdout.write('x' * 5000)\n"
        "sys.stdout.flush()\ntime.sleep(30)"
    )
    with Implementation(flood, timeout=10) as impl, pytest.raises(ImplementationFailure) as err:
        impl.request(b'{"op":"hello"}\n', "hello")
    assert err.value.kind == "protocol"
    assert "longer than 1000 bytes" in err.value.message


def test_a_command_that_does_not_exist_is_a_crash() -> None:
    with pytest.raises(ImplementationFailure) as err:
        Implementation("/nonexistent/impl --serve").start()
    assert err.value.kind == "crash"
    assert "cannot start" in err.value.message


def test_an_empty_command_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        Implementation("   ")


def test_a_crashed_implementation_restarts_on_the_next_request() -> None:
    once = script(
        "import sys\nline = sys.stdin.readline()\nsys.stdout.write(line)\nsys.stdout.flush()"
    )
    with Implementation(once, timeout=10) as impl:
        assert impl.request(b"a\n", "first") == b"a"
        with pytest.raises(ImplementationFailure):
            impl.request(b"b\n", "second")
        assert impl.request(b"c\n", "third") == b"c"
        assert impl.starts == 2

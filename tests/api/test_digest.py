"""``pi_context.support.digest`` gives exactly ``hashlib``'s digests (folder and cache file names
depend on them)."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from pi_context.support.digest import sha1_hex, sha256_hex


@given(data=st.binary(max_size=300))
def test_the_digests_are_hashlibs(data: bytes) -> None:
    assert sha1_hex(data) == hashlib.sha1(data).hexdigest()
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()

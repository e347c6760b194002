"""The local study cluster (issue 20, item 3): it listens on the loopback interface with TLS
credentials made for one study (distributed.Security.temporary), so a local process without them
-- plain TCP, TLS with credentials of its own -- cannot connect and run code as the study's user."""
from __future__ import annotations

import asyncio

import pytest

from solver.study import runner

CONNECT_S = 3.0


def _connect(address, security=None):
    from distributed import Client
    client = Client(address, security=security, timeout=CONNECT_S)
    try:
        return client.submit(lambda: "ran", pure=False).result(timeout=CONNECT_S)
    finally:
        client.close()


@pytest.mark.slow
def test_a_client_without_the_credentials_cannot_connect():
    from distributed.security import Security
    with runner._client("local", 1) as client:
        address = client.scheduler.address
        assert address.startswith(f"tls://{runner.LOOPBACK}:")
        workers = client.scheduler_info()["workers"]
        assert workers and all(w.startswith(f"tls://{runner.LOOPBACK}:") for w in workers)
        assert client.submit(lambda: "ran", pure=False).result(timeout=30) == "ran"     # the study's client
        plain = "tcp://" + address.removeprefix("tls://")
        with pytest.raises((OSError, TimeoutError, asyncio.TimeoutError)):
            _connect(plain)                                      # no TLS at all
        with pytest.raises((OSError, TimeoutError, asyncio.TimeoutError)):
            _connect(address, Security.temporary())              # TLS, but another authority
        with pytest.raises((OSError, TimeoutError, asyncio.TimeoutError, ValueError, TypeError)):
            _connect(address)                                    # no credentials for tls://

"""The test servers themselves (``servers.py``): the static HTTP servers answer Range requests
as RFC 9110 says (or ignore them, for the one that must), the fault proxy injects exactly the
faults it is configured with, and moto is reachable with the options the fixtures hand out.
The store tests rely on all of it."""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

import servers
from conftest import HttpSite

BODY = bytes(range(256)) * 40  # 10240 bytes


@contextmanager
def connection(url: str, timeout: float = 10.0) -> Iterator[http.client.HTTPConnection]:
    parts = urlsplit(url)
    assert parts.hostname == servers.LOOPBACK
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        yield conn
    finally:
        conn.close()


def fetch(
    url: str, method: str = "GET", headers: dict[str, str] | None = None, timeout: float = 10.0
) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(url)
    with connection(url, timeout) as conn:
        conn.request(method, parts.path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()


@pytest.fixture
def served(http_site: HttpSite) -> HttpSite:
    (http_site.dir / "sub").mkdir()
    (http_site.dir / "sub" / "blob").write_bytes(BODY)
    return http_site


# --------------------------------------------------------------------------------------------
# Static HTTP with Range
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "start", "stop"),
    [
        ("bytes=0-0", 0, 1),
        ("bytes=10-99", 10, 100),
        ("bytes=10000-", 10000, 10240),
        ("bytes=10200-20000", 10200, 10240),  # past the end: clipped
        ("bytes=-100", 10140, 10240),  # suffix
        ("bytes=-20000", 0, 10240),  # suffix longer than the file: all of it
    ],
)
def test_range_server_answers_partial_content(
    served: HttpSite, header: str, start: int, stop: int
) -> None:
    status, headers, body = fetch(served.url + "/sub/blob", headers={"Range": header})
    assert status == 206
    assert body == BODY[start:stop]
    assert headers["content-length"] == str(stop - start)
    assert headers["content-range"] == f"bytes {start}-{stop - 1}/{len(BODY)}"


@pytest.mark.parametrize("header", ["bytes=10240-", "bytes=20000-20001"])
def test_range_server_416_for_an_unsatisfiable_range(served: HttpSite, header: str) -> None:
    status, headers, _ = fetch(served.url + "/sub/blob", headers={"Range": header})
    assert status == 416
    assert headers["content-range"] == f"bytes */{len(BODY)}"


def test_range_server_whole_file_head_and_404(served: HttpSite) -> None:
    status, headers, body = fetch(served.url + "/sub/blob")
    assert (status, body, headers["content-length"]) == (200, BODY, str(len(BODY)))
    status, headers, body = fetch(served.url + "/sub/blob", "HEAD")
    assert (status, body, headers["content-length"]) == (200, b"", str(len(BODY)))
    assert fetch(served.url + "/sub/absent")[0] == 404
    assert fetch(served.url + "/sub")[0] == 404  # a directory is not a file
    assert fetch(served.url + "/../../etc/passwd")[0] in (403, 404)


def test_norange_server_answers_the_whole_body(
    served: HttpSite, http_norange_server: servers.ServerProcess
) -> None:
    site = served.at(http_norange_server.url)
    for header in ("bytes=10-99", "bytes=-100", "bytes=20000-"):
        status, headers, body = fetch(site.url + "/sub/blob", headers={"Range": header})
        assert (status, body) == (200, BODY)
        assert "content-range" not in headers
    status, headers, body = fetch(site.url + "/sub/blob", "HEAD")
    assert (status, body, headers["content-length"]) == (200, b"", str(len(BODY)))
    assert fetch(site.url + "/sub/absent")[0] == 404


# --------------------------------------------------------------------------------------------
# The fault proxy
# --------------------------------------------------------------------------------------------


def test_proxy_forwards_unchanged_and_logs(
    served: HttpSite, http_proxy: servers.FaultProxy
) -> None:
    site = served.at(http_proxy.url)
    # several requests on one kept-alive connection, as clients send them
    path = urlsplit(site.url).path + "/sub/blob"
    requests = [(None, BODY), ("bytes=-5", BODY[-5:]), ("bytes=3-6", BODY[3:7])]
    with connection(site.url) as conn:
        for header, want in requests:
            conn.request("GET", path, headers={"Range": header} if header else {})
            assert conn.getresponse().read() == want
        conn.request("HEAD", path)
        resp = conn.getresponse()
        assert (resp.status, resp.read()) == (200, b"")
    log = http_proxy.log()
    assert [(e["method"], e["range"], e["status"], e["action"], e["bytes"]) for e in log] == [
        ("GET", None, 200, "forward", len(BODY)),
        ("GET", "bytes=-5", 206, "forward", 5),
        ("GET", "bytes=3-6", 206, "forward", 4),
        ("HEAD", None, 200, "forward", 0),
    ]


@pytest.mark.parametrize("status", [403, 404, 500, 503])
def test_proxy_answers_the_configured_status(
    served: HttpSite, http_proxy: servers.FaultProxy, status: int
) -> None:
    site = served.at(http_proxy.url)
    rule = servers.FaultRule("status", status=status, path_regex=r"/blob$")
    with http_proxy.faults(rule):
        got, headers, body = fetch(site.url + "/sub/blob")
        assert got == status
        assert body.startswith(b"<?xml") and b"fault injected" in body
        assert fetch(site.url + "/sub/absent")[0] == 404  # not matched: forwarded
    assert fetch(site.url + "/sub/blob")[2] == BODY  # cleared after the block


def test_proxy_drop_resets_the_connection(served: HttpSite, http_proxy: servers.FaultProxy) -> None:
    site = served.at(http_proxy.url)
    with http_proxy.faults(servers.FaultRule("drop")):
        with pytest.raises((ConnectionError, http.client.RemoteDisconnected)):
            fetch(site.url + "/sub/blob")
        assert [e["action"] for e in http_proxy.log()] == ["drop"]


def test_proxy_truncate_resets_mid_body(served: HttpSite, http_proxy: servers.FaultProxy) -> None:
    site = served.at(http_proxy.url)
    path = urlsplit(site.url).path + "/sub/blob"
    with http_proxy.faults(servers.FaultRule("truncate", after_bytes=1000)):
        with connection(site.url) as conn:
            conn.request("GET", path)
            resp = conn.getresponse()
            assert resp.status == 200 and resp.getheader("content-length") == str(len(BODY))
            with pytest.raises((http.client.IncompleteRead, ConnectionError)) as exc:
                resp.read()
            if isinstance(exc.value, http.client.IncompleteRead):
                assert exc.value.partial == BODY[:1000]
        assert [(e["action"], e["bytes"]) for e in http_proxy.log()] == [("truncate", 1000)]


def test_proxy_delay_and_latency(served: HttpSite, http_proxy: servers.FaultProxy) -> None:
    site = served.at(http_proxy.url)
    with http_proxy.faults(servers.FaultRule("delay", delay_s=0.5, times=1)):
        t0 = time.perf_counter()
        assert fetch(site.url + "/sub/blob")[2] == BODY
        assert time.perf_counter() - t0 >= 0.5
        t0 = time.perf_counter()
        assert fetch(site.url + "/sub/blob")[2] == BODY  # times=1: once only
        assert time.perf_counter() - t0 < 0.5
    with http_proxy.faults(latency_ms=100):
        t0 = time.perf_counter()
        for _ in range(3):
            assert fetch(site.url + "/sub/blob")[0] == 200
        assert time.perf_counter() - t0 >= 0.3
    with http_proxy.faults(servers.FaultRule("delay", delay_s=5)):  # a client's timeout
        with pytest.raises(TimeoutError):
            fetch(site.url + "/sub/blob", timeout=0.3)


def test_proxy_fraction_is_deterministic(served: HttpSite, http_proxy: servers.FaultProxy) -> None:
    site = served.at(http_proxy.url)

    def statuses(seed: int) -> list[int]:
        rule = servers.FaultRule("status", status=500, fraction=0.3)
        with http_proxy.faults(rule, seed=seed):
            return [fetch(site.url + "/sub/blob")[0] for _ in range(40)]

    first = statuses(7)
    assert statuses(7) == first
    assert 3 <= first.count(500) <= 25 and set(first) == {200, 500}
    assert statuses(8) != first


def test_proxy_rule_filters(served: HttpSite, http_proxy: servers.FaultProxy) -> None:
    site = served.at(http_proxy.url)
    rule = servers.FaultRule("status", status=503, methods=("HEAD",), times=2)
    with http_proxy.faults(rule):
        assert fetch(site.url + "/sub/blob")[0] == 200  # GET: not matched
        assert [fetch(site.url + "/sub/blob", "HEAD")[0] for _ in range(3)] == [503, 503, 200]


def test_servers_stop_when_asked_and_fail_to_start_clearly(tmp_path: Path) -> None:
    server = servers.start_http(tmp_path)
    url = server.url
    assert fetch(url + "/absent")[0] == 404
    server.stop()
    assert not server.alive()
    with pytest.raises(ConnectionError):
        fetch(url + "/absent", timeout=2)
    with pytest.raises(servers.ServerStartError, match="exited with status 2"):
        servers.ServerProcess("http", ["--no-such-option"])


def test_proxy_rejects_unknown_commands(http_proxy: servers.FaultProxy) -> None:
    with pytest.raises(servers.ServerControlError, match="unknown command"):
        http_proxy.command({"op": "nonsense"})
    assert http_proxy.log() == []  # still answering


# --------------------------------------------------------------------------------------------
# moto
# --------------------------------------------------------------------------------------------


def test_moto_bucket_through_every_client(proxied_bucket: servers.S3Bucket) -> None:
    obstore = pytest.importorskip("obstore")
    s3fs = pytest.importorskip("s3fs")
    bucket = proxied_bucket
    obstore.put(bucket.obstore(), "x/one", b"1")
    fs = s3fs.S3FileSystem(**bucket.fsspec_options())
    fs.pipe(f"{bucket.name}/x/two", b"22")
    assert bucket.keys() == ["x/one", "x/two"]
    assert bucket.get("x/two") == b"22" and bucket.get("x/absent") is None
    assert bytes(obstore.get(bucket.obstore("x"), "two").bytes()) == b"22"
    assert fs.cat(f"{bucket.name}/x/one") == b"1"


def test_moto_changes_objects_one_request_at_a_time() -> None:
    """moto checks a conditional PUT's ETag and then writes, two steps another PUT can come
    between (a lost update S3 never allows); run_moto puts its application behind
    ``_changes_one_at_a_time``: requests that change objects run one at a time, reads
    alongside them. Shown with an application slow enough for overlaps to happen."""
    from concurrent.futures import ThreadPoolExecutor

    active = {"change": 0, "read": 0}
    most = {"change": 0, "read": 0, "read beside a change": 0}
    guard = threading.Lock()

    def slow_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        kind = "read" if environ["REQUEST_METHOD"] == "GET" else "change"
        with guard:
            active[kind] += 1
            most[kind] = max(most[kind], active[kind])
            if kind == "read" and active["change"]:
                most["read beside a change"] += 1
        time.sleep(0.02)
        with guard:
            active[kind] -= 1
        start_response("200 OK", [])
        return [kind.encode()]

    app = servers._changes_one_at_a_time(slow_app)
    methods = ["PUT", "GET", "DELETE", "GET", "POST", "GET", "PUT", "GET"] * 4
    with ThreadPoolExecutor(len(methods)) as pool:
        bodies = list(pool.map(lambda m: app({"REQUEST_METHOD": m}, lambda *_: None), methods))
    assert [b"read" if m == "GET" else b"change" for m in methods] == [b"".join(b) for b in bodies]
    assert most["change"] == 1, most
    assert most["read"] > 1 and most["read beside a change"] > 0, most

"""Servers the store tests and the S3 benchmark start on 127.0.0.1, each in a child process.

* ``moto``: moto's S3 server (``moto[server]``), in memory;
* ``http``: a static file server for one directory (aiohttp's ``FileResponse``): ``Range``
  requests (single, open-ended and suffix ranges; 416 with ``Content-Range: bytes */size`` for
  an unsatisfiable one), ``HEAD``, ``Content-Length``;
* ``http-norange``: the same directory, but ``Range`` is ignored: every ``GET`` answers 200 with
  the whole file;
* ``proxy``: an HTTP/1.1 proxy in front of any of them that injects faults (see
  :class:`FaultRule`) and adds latency per request, reconfigurable while it runs.

Every server binds port 0 on 127.0.0.1 and reports the port it got, so there is no race for a
"free" port. A child stops by itself when its parent goes away (its stdin closes) or after
``--max-lifetime`` seconds; :meth:`ServerProcess.stop` stops it at once. Start-up waits are
bounded and a server that fails to start raises :class:`ServerStartError` with its stderr.

The same file is the child: ``python tests/servers.py {moto,http,http-norange,proxy} ...``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import logging
import os
import re
import selectors
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

LOOPBACK = "127.0.0.1"
#: How long a child may take to report its port (moto imports slowly on a busy machine).
START_TIMEOUT_S = 60.0
#: A child stops by itself after this long, whatever happens to its parent.
MAX_LIFETIME_S = 4 * 3600.0
#: Dummy credentials and region for moto (it accepts any).
AWS_KEY_ID = "zarrox-test-key"
AWS_SECRET = "zarrox-test-secret"
AWS_REGION = "us-east-1"

READY_TAG = "SERVER_READY"
CONTROL_OK = "CONTROL_OK"


class ServerStartError(RuntimeError):
    """A server child did not report its port in time, or exited first."""


class ServerControlError(RuntimeError):
    """A server child did not answer a control command."""


# --------------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------------


class ServerProcess:
    """One server child. ``port`` and ``url`` once started; a context manager that stops it."""

    def __init__(self, kind: str, args: list[str], *, start_timeout: float = START_TIMEOUT_S):
        self.kind = kind
        self._stderr = tempfile.TemporaryFile()
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        self._proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), kind, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
            env=env,
        )
        self._lock = threading.Lock()
        try:
            line = self._readline(start_timeout, f"start the {kind} server")
            if not line.startswith(READY_TAG + " "):
                raise ServerStartError(f"{kind} server said {line!r} instead of its port")
            self.port = int(line.split()[1])
        except BaseException:
            self.stop()
            raise
        self.url = f"http://{LOOPBACK}:{self.port}"

    def stderr_text(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")

    def _readline(self, timeout: float, what: str) -> str:
        """The next line the child prints, waiting at most ``timeout`` seconds."""
        assert self._proc.stdout is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self._proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ServerStartError(
                        f"could not {what} within {timeout:.0f} s; its stderr:\n"
                        + self.stderr_text()[-3000:]
                    )
                if sel.select(min(left, 0.5)):
                    line = self._proc.stdout.readline()
                    if line:
                        return line.strip()
                    raise ServerStartError(
                        f"could not {what}: it exited with status {self._proc.wait()}; its"
                        f" stderr:\n" + self.stderr_text()[-3000:]
                    )

    def command(self, cmd: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """Send a control command (proxy only) and return its JSON answer."""
        with self._lock:
            assert self._proc.stdin is not None
            self._proc.stdin.write(json.dumps(cmd) + "\n")
            self._proc.stdin.flush()
            try:
                line = self._readline(timeout, f"run {cmd.get('op')!r} on the {self.kind} server")
            except ServerStartError as e:
                raise ServerControlError(str(e)) from None
        if not line.startswith(CONTROL_OK + " "):
            raise ServerControlError(f"{self.kind} server answered {line!r} to {cmd!r}")
        return json.loads(line[len(CONTROL_OK) + 1 :])

    def alive(self) -> bool:
        return self._proc.poll() is None

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the child has used so far (Linux ``/proc``)."""
        with open(f"/proc/{self._proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        """Stop the child (closing its stdin asks it to; then SIGTERM, then SIGKILL)."""
        if self._proc.poll() is None:
            with contextlib.suppress(OSError):
                assert self._proc.stdin is not None
                self._proc.stdin.close()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.terminate()
                try:
                    self._proc.wait(5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait(5)
        for stream in (self._proc.stdin, self._proc.stdout):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()
        self._stderr.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_moto(**kw: Any) -> ServerProcess:
    """moto's S3 server, in memory."""
    return ServerProcess("moto", [], **kw)


def start_http(
    root: str | os.PathLike[str], *, ranges: bool = True, token: str | None = None, **kw: Any
) -> ServerProcess:
    """A static file server for ``root``; ``ranges=False``: one that ignores ``Range``;
    ``token``: one that answers 403 to a request whose URL lacks ``?token=<token>`` (as
    presigned or SAS URLs are refused without their query)."""
    args = ["--root", os.fspath(root)] + (["--token", token] if token is not None else [])
    return ServerProcess("http" if ranges else "http-norange", args, **kw)


@dataclass
class FaultRule:
    """One kind of fault the proxy injects into the requests it matches.

    A request matches when its method is in ``methods`` (empty: any), ``path_regex`` is found in
    its path (query included; empty: any) and a deterministic draw from (seed, method, path, the
    how-many-th such request) falls below ``fraction``; at most ``times`` requests (None: no
    limit). The first matching rule acts:

    * ``status``: answer ``status`` (403, 404, 500, 503, ...) with an S3-style XML error body,
      without asking the upstream server;
    * ``drop``: reset the connection (RST) without an answer;
    * ``delay``: wait ``delay_s`` seconds, then forward the request;
    * ``truncate``: forward, then send the upstream's status line, headers and the first
      ``after_bytes`` bytes of its body, and reset the connection;
    * ``rewrite``: first replace the object the request names with a copy of the next object of
      ``rewrite_from`` (bucket-qualified paths, ``/bucket/key``, taken in turn; an S3 CopyObject
      sent upstream), then forward the request: a writer that always comes between a reader's
      requests.

    ``with_header`` (a header name, lower case; empty: any) restricts a rule to requests that
    carry that header, e.g. ``if-match`` for the reads conditional on a version.
    """

    action: str
    status: int = 503
    path_regex: str = ""
    methods: tuple[str, ...] = ()
    fraction: float = 1.0
    times: int | None = None
    delay_s: float = 0.0
    after_bytes: int = 0
    with_header: str = ""
    rewrite_from: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.action not in ("status", "drop", "delay", "truncate", "rewrite"):
            raise ValueError(f"unknown fault action {self.action!r}")
        self.methods = tuple(m.upper() for m in self.methods)


@dataclass
class FaultPlan:
    """What the proxy does: ``latency_ms`` added before forwarding every request, and ``rules``
    (the first matching one acts; draws are deterministic given ``seed``)."""

    rules: list[FaultRule] = field(default_factory=list)
    latency_ms: float = 0.0
    seed: int = 0
    #: request headers removed before forwarding (e.g. a server or proxy that drops the
    #: conditions of conditional writes: "if-match", "if-none-match")
    strip_headers: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "rules": [asdict(r) for r in self.rules],
            "latency_ms": self.latency_ms,
            "seed": self.seed,
            "strip_headers": list(self.strip_headers),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> FaultPlan:
        rules = [
            FaultRule(
                **{
                    **r,
                    "methods": tuple(r.get("methods", ())),
                    "rewrite_from": tuple(r.get("rewrite_from", ())),
                }
            )
            for r in obj["rules"]
        ]
        return cls(
            rules,
            float(obj.get("latency_ms", 0.0)),
            int(obj.get("seed", 0)),
            tuple(obj.get("strip_headers", ())),
        )


class FaultProxy(ServerProcess):
    """The fault-injecting proxy child, in front of ``upstream_port`` on 127.0.0.1."""

    def __init__(self, upstream_port: int, plan: FaultPlan | None = None, **kw: Any) -> None:
        plan = plan or FaultPlan()
        super().__init__(
            "proxy",
            ["--upstream-port", str(upstream_port), "--plan", json.dumps(plan.to_json())],
            **kw,
        )

    def configure(self, plan: FaultPlan) -> None:
        """Replace the plan, effective for the next request; the per-rule counters and the
        log start afresh (requests still in flight from before are not logged)."""
        self.command({"op": "configure", "plan": plan.to_json()})

    def clear(self) -> None:
        """Forward everything unchanged, with no added latency."""
        self.configure(FaultPlan())

    def log(self, reset: bool = False) -> list[dict[str, Any]]:
        """The requests seen (the last 10,000), in the order they were answered: method, path,
        range (the request's Range header), if_match and if_none_match (its conditions), action,
        status, bytes (of the body sent back)."""
        return self.command({"op": "log", "reset": reset})["log"]

    @contextlib.contextmanager
    def faults(self, *rules: FaultRule, seed: int = 0, latency_ms: float = 0.0) -> Iterator[None]:
        """Inject ``rules`` inside the block (the request log starts empty), clear them after."""
        self.configure(FaultPlan(list(rules), latency_ms, seed))
        self.log(reset=True)
        try:
            yield
        finally:
            self.clear()


# --------------------------------------------------------------------------------------------
# S3 helpers (parent side)
# --------------------------------------------------------------------------------------------


def s3_client(endpoint: str) -> Any:
    """A boto3 S3 client for the moto server at ``endpoint`` (no retries)."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=AWS_KEY_ID,
        aws_secret_access_key=AWS_SECRET,
        region_name=AWS_REGION,
        config=Config(retries={"max_attempts": 1}, s3={"addressing_style": "path"}),
    )


@dataclass(frozen=True)
class S3Bucket:
    """A bucket on the moto server, reached at ``endpoint`` (moto itself, or a proxy in front
    of it), and how each client library is pointed at it."""

    endpoint: str
    name: str
    #: moto itself, for checks that must not go through a proxy (None: ``endpoint``)
    direct_endpoint: str | None = None

    @classmethod
    def create(cls, endpoint: str, name: str | None = None) -> S3Bucket:
        name = name or f"zarrox-{uuid.uuid4().hex[:16]}"
        s3_client(endpoint).create_bucket(Bucket=name)
        return cls(endpoint, name)

    def via(self, endpoint: str) -> S3Bucket:
        """The same bucket reached at another endpoint (a proxy in front of moto)."""
        return S3Bucket(endpoint, self.name, self.direct_endpoint or self.endpoint)

    def url(self, path: str = "") -> str:
        return f"s3://{self.name}/{path}" if path else f"s3://{self.name}"

    def object_store_options(self) -> dict[str, Any]:
        """``storage_options`` with object_store's keys (zarrox's engine)."""
        return {
            "aws_access_key_id": AWS_KEY_ID,
            "aws_secret_access_key": AWS_SECRET,
            "aws_endpoint": self.endpoint,
            "aws_region": AWS_REGION,
            "aws_allow_http": "true",
        }

    def fsspec_options(self) -> dict[str, Any]:
        """``storage_options`` with s3fs's keys (no listings cache: other clients write too)."""
        return {
            "key": AWS_KEY_ID,
            "secret": AWS_SECRET,
            "endpoint_url": self.endpoint,
            "client_kwargs": {"region_name": AWS_REGION},
            "use_listings_cache": False,
            "skip_instance_cache": True,
        }

    def env(self) -> dict[str, str]:
        """The environment variables that reach the bucket without any options."""
        return {
            "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": AWS_REGION,
            "AWS_DEFAULT_REGION": AWS_REGION,
            "AWS_ALLOW_HTTP": "true",
        }

    def obstore(self, prefix: str = "", **client_options: Any) -> Any:
        """An ``obstore.store.S3Store`` for ``prefix`` in the bucket."""
        from obstore.store import S3Store

        return S3Store(
            self.name,
            prefix=prefix or None,
            endpoint=self.endpoint,
            access_key_id=AWS_KEY_ID,
            secret_access_key=AWS_SECRET,
            region=AWS_REGION,
            virtual_hosted_style_request=False,
            client_options={"allow_http": True, **client_options},
        )

    def zarr_obstore(self, prefix: str = "", read_only: bool = False) -> Any:
        """zarr-python's ``ObjectStore`` over :meth:`obstore`."""
        from zarr.storage import ObjectStore

        return ObjectStore(self.obstore(prefix), read_only=read_only)

    def zarr_s3fs(self, prefix: str = "", read_only: bool = False) -> Any:
        """zarr-python's ``FsspecStore`` over s3fs."""
        from zarr.storage import FsspecStore

        return FsspecStore.from_url(
            self.url(prefix), storage_options=self.fsspec_options(), read_only=read_only
        )

    def tensorstore_kvstore(self, path: str = "") -> dict[str, Any]:
        """tensorstore's ``s3`` kvstore spec for ``path`` (a "directory": ends in "/"); the
        credentials come from the environment (:meth:`env`)."""
        return {
            "driver": "s3",
            "bucket": self.name,
            "path": path,
            "endpoint": self.endpoint,
            "aws_region": AWS_REGION,
            "aws_credentials": {"type": "environment"},
        }

    def keys(self, prefix: str = "") -> list[str]:
        """Every object key under ``prefix``, asked of moto directly, sorted."""
        client = s3_client(self.direct_endpoint or self.endpoint)
        out: list[str] = []
        for page in client.get_paginator("list_objects_v2").paginate(
            Bucket=self.name, Prefix=prefix
        ):
            out += [o["Key"] for o in page.get("Contents", [])]
        return sorted(out)

    def get(self, key: str) -> bytes | None:
        """An object's bytes, asked of moto directly; None when absent."""
        client = s3_client(self.direct_endpoint or self.endpoint)
        try:
            return client.get_object(Bucket=self.name, Key=key)["Body"].read()
        except client.exceptions.NoSuchKey:
            return None

    def put(self, key: str, data: bytes) -> None:
        s3_client(self.direct_endpoint or self.endpoint).put_object(
            Bucket=self.name, Key=key, Body=data
        )


def isolated_aws_env(home: str | os.PathLike[str]) -> dict[str, str]:
    """Environment variables that keep every AWS client (botocore, object_store, tensorstore's)
    away from the real world: no instance-metadata lookups (the endpoint, should one still be
    tried, is a closed port on 127.0.0.1), no shared config or credentials files of the user."""
    home = os.fspath(home)
    return {
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_EC2_METADATA_SERVICE_ENDPOINT": f"http://{LOOPBACK}:9",
        "AWS_METADATA_ENDPOINT": f"http://{LOOPBACK}:9",
        "AWS_CONFIG_FILE": os.path.join(home, "aws-config-absent"),
        "AWS_SHARED_CREDENTIALS_FILE": os.path.join(home, "aws-credentials-absent"),
    }


# --------------------------------------------------------------------------------------------
# Child side
# --------------------------------------------------------------------------------------------


def _announce(port: int) -> None:
    print(f"{READY_TAG} {port}", flush=True)


def _watch_parent(on_exit: Any, max_lifetime: float) -> None:
    """Call ``on_exit`` when stdin closes (the parent stopped us or died) or after
    ``max_lifetime`` seconds, whichever is first. Control commands (JSON lines on stdin) go to
    ``on_exit.command`` when it has one."""

    def loop() -> None:
        deadline = time.monotonic() + max_lifetime
        with selectors.DefaultSelector() as sel:
            sel.register(sys.stdin, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not sel.select(min(1.0, max(0.0, deadline - time.monotonic()))):
                    continue
                line = sys.stdin.readline()
                if not line:
                    break
                handler = getattr(on_exit, "command", None)
                try:
                    if handler is None:
                        raise ValueError("this server takes no commands")
                    answer = handler(json.loads(line))
                    print(f"{CONTROL_OK} {json.dumps(answer)}", flush=True)
                except Exception as e:  # reported to the parent, who raises
                    print(f"CONTROL_ERROR {type(e).__name__}: {e}", flush=True)
        on_exit()

    threading.Thread(target=loop, daemon=True).start()


def _changes_one_at_a_time(app: Any) -> Any:
    """``app`` (a WSGI application) answering requests that change objects one at a time.

    moto checks a PUT's ``If-Match``/``If-None-Match`` and then stores the object, two steps
    that another thread's PUT can come between: two writers conditional on one ETag could
    both succeed, a lost update S3 never allows (it decides the condition and the write as
    one). The concurrent-writer tests rely on S3's rule, so moto is given it here; reads stay
    concurrent."""
    lock = threading.Lock()

    def serve(environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("REQUEST_METHOD") in ("GET", "HEAD", "OPTIONS"):
            return app(environ, start_response)
        with lock:
            return list(app(environ, start_response))

    return serve


def run_moto(args: argparse.Namespace) -> None:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    server = ThreadedMotoServer(ip_address=LOOPBACK, port=0, verbose=False)
    server.start()
    wsgi = server._server  # werkzeug's server: it looks its application up per request
    assert wsgi is not None
    wsgi.app = _changes_one_at_a_time(wsgi.app)
    stopped = threading.Event()
    _watch_parent(stopped.set, args.max_lifetime)
    _announce(server.get_host_and_port()[1])
    stopped.wait()
    server.stop()


def run_http(args: argparse.Namespace, ranges: bool) -> None:
    from aiohttp import web

    root = Path(args.root).resolve()

    def resolve(request: web.Request) -> Path:
        if args.token is not None and request.query.get("token") != args.token:
            raise web.HTTPForbidden()
        path = (root / request.match_info["tail"]).resolve()
        if root != path and root not in path.parents:
            raise web.HTTPForbidden()
        if not path.is_file():
            raise web.HTTPNotFound()
        return path

    async def with_ranges(request: web.Request) -> web.StreamResponse:
        return web.FileResponse(resolve(request))

    async def without_ranges(request: web.Request) -> web.StreamResponse:
        path = resolve(request)
        return web.Response(body=path.read_bytes(), content_type="application/octet-stream")

    app = web.Application()
    app.router.add_get("/{tail:.*}", with_ranges if ranges else without_ranges)
    asyncio.run(_serve_aiohttp(app, args.max_lifetime))


async def _serve_aiohttp(app: Any, max_lifetime: float) -> None:
    from aiohttp import web

    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, LOOPBACK, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    _watch_parent(lambda: loop.call_soon_threadsafe(stopped.set), max_lifetime)
    _announce(port)
    await stopped.wait()
    await runner.cleanup()


# ----------------------------------------------------------------------------- the proxy

#: Bounds that keep the proxy from running away: requests per client connection, bytes of a
#: request or response head, seconds a connection may sit idle, entries in the request log.
MAX_REQUESTS_PER_CONNECTION = 100_000
MAX_HEAD_BYTES = 64 * 1024
IDLE_TIMEOUT_S = 120.0
LOG_ENTRIES = 10_000
COPY_BLOCK = 256 * 1024

_S3_CODES = {
    400: "BadRequest",
    403: "AccessDenied",
    404: "NoSuchKey",
    409: "Conflict",
    500: "InternalError",
    503: "SlowDown",
}
_REASONS = {
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class _Head:
    """A parsed HTTP/1.1 request or response head."""

    def __init__(self, raw: bytes) -> None:
        lines = raw.decode("latin-1").split("\r\n")
        self.start = lines[0]
        self.headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                self.headers.append((name.strip(), value.strip()))

    def get(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    def without(self, *names: str) -> bytes:
        drop = {n.lower() for n in names}
        kept = [f"{k}: {v}" for k, v in self.headers if k.lower() not in drop]
        return ("\r\n".join([self.start, *kept]) + "\r\n\r\n").encode("latin-1")

    def encode(self) -> bytes:
        return self.without()


async def _read_head(reader: asyncio.StreamReader) -> bytes | None:
    """The next head (up to the blank line), None at a clean end of the stream."""
    try:
        raw = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), IDLE_TIMEOUT_S)
    except asyncio.IncompleteReadError as e:
        if e.partial.strip():
            raise
        return None
    except asyncio.LimitOverrunError:
        raise ValueError("HTTP head too long") from None
    return raw


async def _copy_body(
    reader: asyncio.StreamReader,
    writer: Any,
    head: _Head,
    *,
    until_eof: bool,
    limit: int | None = None,
) -> tuple[bool, int]:
    """Copy one message body (Content-Length, chunked or, with ``until_eof``, to the end of the
    stream) from ``reader`` to ``writer`` (None: discard). Returns (whole, bytes copied); with
    ``limit``, it stops after that many bytes, not whole (the caller then resets the
    connection)."""
    sent = 0

    async def forward(data: bytes) -> bool:
        nonlocal sent
        if limit is not None and sent + len(data) > limit:
            if writer is not None:
                writer.write(data[: limit - sent])
                await writer.drain()
            sent = limit
            return False
        sent += len(data)
        if writer is not None:
            writer.write(data)
            await writer.drain()
        return True

    if (head.get("transfer-encoding") or "").lower() == "chunked":
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0].strip(), 16)
            if not await forward(size_line):
                return False, sent
            if size == 0:  # trailers, then the blank line
                while True:
                    line = await reader.readuntil(b"\r\n")
                    if not await forward(line):
                        return False, sent
                    if line == b"\r\n":
                        return True, sent
            if not await forward(await reader.readexactly(size + 2)):
                return False, sent
    length = head.get("content-length")
    if length is not None:
        left = int(length)
        while left:
            data = await reader.readexactly(min(left, COPY_BLOCK))
            left -= len(data)
            if not await forward(data):
                return False, sent
        return True, sent
    if until_eof:
        while data := await reader.read(COPY_BLOCK):
            if not await forward(data):
                return False, sent
    return True, sent


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close the connection with a TCP reset (SO_LINGER 0), not a clean FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class _Proxy:
    def __init__(self, upstream_port: int, plan: FaultPlan) -> None:
        self.upstream_port = upstream_port
        self.plan = plan
        self.counters: dict[str, int] = {}
        self.applied: list[int] = []
        self.entries: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        #: responses being sent back (their log entry is written when the body is through)
        self.sending = 0
        #: counts the plans configured: the log keeps the requests of the current one only
        self.generation = 0

    # control (from the stdin thread)
    def command(self, cmd: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            if cmd["op"] == "configure":
                self.plan = FaultPlan.from_json(cmd["plan"])
                self.generation += 1
                self.entries.clear()
                self.counters.clear()
                self.applied = [0] * len(self.plan.rules)
                return {}
            if cmd["op"] == "log":
                out = self._settled_entries()
                if cmd.get("reset"):
                    self.entries.clear()
                return {"log": out}
        raise ValueError(f"unknown command {cmd!r}")

    def _settled_entries(self) -> list[dict[str, Any]]:
        """The log, once every response being sent has been logged (a client may have read a
        whole body a moment before its entry is written); waits 5 s at most."""
        deadline = time.monotonic() + 5.0
        while self.sending and time.monotonic() < deadline:
            self.lock.release()
            time.sleep(0.002)
            self.lock.acquire()
        return list(self.entries)

    def decide(
        self, method: str, path: str, headers: _Head | None = None
    ) -> tuple[FaultRule | None, float, int]:
        """(the rule that acts on this request or None, the latency to add in seconds, the
        plan's generation)."""
        with self.lock:
            plan, generation = self.plan, self.generation
            if len(self.applied) != len(plan.rules):
                self.applied = [0] * len(plan.rules)
            nth = self.counters.get(f"{method} {path}", 0)
            self.counters[f"{method} {path}"] = nth + 1
            for i, rule in enumerate(plan.rules):
                if rule.methods and method not in rule.methods:
                    continue
                if rule.path_regex and not re.search(rule.path_regex, path):
                    continue
                if rule.with_header and (headers is None or headers.get(rule.with_header) is None):
                    continue
                if rule.times is not None and self.applied[i] >= rule.times:
                    continue
                digest = hashlib.blake2b(f"{plan.seed}|{i}|{method}|{path}|{nth}".encode()).digest()
                if int.from_bytes(digest[:8], "big") / 2**64 >= rule.fraction:
                    continue
                self.applied[i] += 1
                return rule, plan.latency_ms / 1e3, generation
            return None, plan.latency_ms / 1e3, generation

    def record(self, generation: int, **entry: Any) -> None:
        """Log a request, unless it arrived under an earlier plan (a request delayed past the
        test that configured it must not show up in the next test's log)."""
        with self.lock:
            if generation == self.generation:
                self.entries.append(entry)
                del self.entries[:-LOG_ENTRIES]

    async def handle(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        try:
            for _ in range(MAX_REQUESTS_PER_CONNECTION):
                raw = await _read_head(creader)
                if raw is None:
                    return
                req = _Head(raw)
                method, path = req.start.split(" ")[:2]
                rule, latency, generation = self.decide(method, path, req)
                entry = {
                    "method": method,
                    "path": path,
                    "range": req.get("range"),
                    "if_match": req.get("if-match"),
                    "if_none_match": req.get("if-none-match"),
                }
                action = rule.action if rule else "forward"
                if (req.get("expect") or "").lower() == "100-continue":
                    if action == "drop":  # the client never sends its body then
                        self.record(generation, **entry, action="drop", status=None, bytes=0)
                        _reset(cwriter)
                        return
                    if action == "status":
                        await self._reply_error(cwriter, rule, entry, True, generation)  # type: ignore[arg-type]
                        return
                    cwriter.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                    await cwriter.drain()
                body = _Collect()
                await _copy_body(creader, body, req, until_eof=False)
                if latency:
                    await asyncio.sleep(latency)
                if action == "drop":
                    self.record(generation, **entry, action="drop", status=None, bytes=0)
                    _reset(cwriter)
                    return
                if action == "status":
                    await self._reply_error(cwriter, rule, entry, False, generation)  # type: ignore[arg-type]
                    continue
                if action == "rewrite":
                    await self._rewrite(rule, path, generation)  # type: ignore[arg-type]
                    action = "forward"
                if action == "delay":
                    # Logged when applied: the client may give up (time out) before the
                    # delayed answer is sent, and the test looks at the log right after.
                    self.record(generation, **entry, action="delay", status=None, bytes=0)
                    await asyncio.sleep(rule.delay_s)  # type: ignore[union-attr]
                    action = "forward"
                if upstream is None:
                    upstream = await asyncio.open_connection(LOOPBACK, self.upstream_port)
                ureader, uwriter = upstream
                uwriter.write(req.without("expect", *self.plan.strip_headers) + bytes(body.buf))
                await uwriter.drain()
                while True:  # skip interim 1xx answers
                    resp_raw = await _read_head(ureader)
                    if resp_raw is None:
                        raise ConnectionError("upstream closed the connection")
                    resp = _Head(resp_raw)
                    status = int(resp.start.split(" ")[1])
                    if status >= 200 or status == 101:
                        break
                with self.lock:
                    self.sending += 1
                whole, nbytes = False, 0
                try:
                    cwriter.write(resp.encode())
                    await cwriter.drain()
                    has_body = method != "HEAD" and status not in (204, 304)
                    close = (resp.get("connection") or "").lower() == "close"
                    framed = resp.get("content-length") is not None or (
                        (resp.get("transfer-encoding") or "").lower() == "chunked"
                    )
                    limit = rule.after_bytes if action == "truncate" else None  # type: ignore[union-attr]
                    whole = True
                    if has_body:
                        whole, nbytes = await _copy_body(
                            ureader, cwriter, resp, until_eof=not framed, limit=limit
                        )
                finally:
                    self.record(generation, **entry, action=action, status=status, bytes=nbytes)
                    with self.lock:
                        self.sending -= 1
                if not whole or (action == "truncate" and not has_body):
                    _reset(cwriter)
                    return
                if close or (has_body and not framed):
                    return
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            if upstream is not None:
                upstream[1].close()
            if not cwriter.transport.is_closing():
                cwriter.close()

    async def _rewrite(self, rule: FaultRule, path: str, generation: int) -> None:
        """Replace the object at ``path`` with a copy of the next of ``rule.rewrite_from``,
        upstream, on a connection of its own; logged as a ``rewrite`` entry."""
        with self.lock:
            self.counters["\0rewrites"] = nth = self.counters.get("\0rewrites", 0) + 1
        source = rule.rewrite_from[(nth - 1) % len(rule.rewrite_from)]
        target = path.split("?", 1)[0]
        # moto refuses anonymous writes and checks no signature: a credential is enough.
        auth = (
            f"AWS4-HMAC-SHA256 Credential={AWS_KEY_ID}/20260101/{AWS_REGION}/s3/aws4_request, "
            "SignedHeaders=host, Signature=0"
        )
        reader, writer = await asyncio.open_connection(LOOPBACK, self.upstream_port)
        try:
            writer.write(
                f"PUT {target} HTTP/1.1\r\nHost: {LOOPBACK}:{self.upstream_port}\r\n"
                f"Authorization: {auth}\r\n"
                f"x-amz-copy-source: {source}\r\nContent-Length: 0\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            await writer.drain()
            raw = await _read_head(reader)
            if raw is None:
                raise ConnectionError("upstream closed the connection")
            head = _Head(raw)
            await _copy_body(reader, None, head, until_eof=True)
            status = int(head.start.split(" ")[1])
        finally:
            writer.close()
        self.record(
            generation,
            method="PUT",
            path=target,
            range=None,
            action="rewrite",
            status=status,
            bytes=0,
            source=source,
        )

    async def _reply_error(
        self,
        cwriter: asyncio.StreamWriter,
        rule: FaultRule,
        entry: dict[str, Any],
        close: bool,
        generation: int,
    ) -> None:
        status = rule.status
        code = _S3_CODES.get(status, "InjectedFault")
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f"<Error><Code>{code}</Code><Message>fault injected by the test proxy"
            f"</Message><Resource>{entry['path']}</Resource><RequestId>0</RequestId></Error>"
        ).encode()
        head = (
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Injected Fault')}\r\n"
            "Content-Type: application/xml\r\n"
            f"Content-Length: {len(body)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n"
        ).encode()
        self.record(generation, **entry, action="status", status=status, bytes=0)
        cwriter.write(head + (b"" if entry["method"] == "HEAD" else body))
        await cwriter.drain()


class _Collect:
    """A writer-like sink that collects a request body (``_copy_body`` writes into it)."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def write(self, data: bytes) -> None:
        self.buf += data

    async def drain(self) -> None:
        return None


def run_proxy(args: argparse.Namespace) -> None:
    proxy = _Proxy(args.upstream_port, FaultPlan.from_json(json.loads(args.plan)))

    async def main() -> None:
        server = await asyncio.start_server(proxy.handle, LOOPBACK, 0, limit=MAX_HEAD_BYTES)
        loop = asyncio.get_running_loop()
        stopped = asyncio.Event()

        class Control:
            def __call__(self) -> None:
                loop.call_soon_threadsafe(stopped.set)

            command = staticmethod(proxy.command)

        _watch_parent(Control(), args.max_lifetime)
        _announce(server.sockets[0].getsockname()[1])
        async with server:
            await stopped.wait()

    asyncio.run(main())


def child_main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="a test server on 127.0.0.1 (see the module doc)")
    p.add_argument("kind", choices=("moto", "http", "http-norange", "proxy"))
    p.add_argument("--root", help="http: the directory served")
    p.add_argument("--token", help="http: the ?token= every request must carry")
    p.add_argument("--upstream-port", type=int, help="proxy: the server behind it")
    p.add_argument("--plan", default='{"rules": []}', help="proxy: a FaultPlan as JSON")
    p.add_argument("--max-lifetime", type=float, default=MAX_LIFETIME_S)
    args = p.parse_args(argv)
    if args.kind == "moto":
        run_moto(args)
    elif args.kind in ("http", "http-norange"):
        run_http(args, ranges=args.kind == "http")
    else:
        run_proxy(args)


if __name__ == "__main__":
    child_main()

"""``kvstore``: where an array's keys live, as TensorStore describes it (a ``KvStore`` object
or a URL such as ``"file:///data/a.zarr/"``, ``"s3://bucket/prefix/"``,
``"file:///data/a.zip|zip:inner/"``), mapped onto zarrox stores.

TensorStore drivers and their zarrox stores: ``file`` -> :class:`zarrox.LocalStore`,
``memory`` -> :class:`zarrox.MemoryStore` (a new one per open, as with a fresh TensorStore
context, unless the spec comes from ``Array.spec()``, which keeps the store it describes),
``s3``/``gcs``/``http`` -> the object store for ``s3://``, ``gs://``, ``https://`` URLs and
``zip`` -> the zip store, through :func:`zarrox.storage.resolve_store`.
"""

from __future__ import annotations

import copy
import inspect
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from zarrox.errors import UnsupportedError
from zarrox.storage import LocalStore, MemoryStore, Store, resolve_store
from zarrox.storage.references import OPTIONS as REFERENCE_OPTIONS
from zarrox.storage.references import ReferenceStore
from zarrox.tensorstore_spec._json import (
    check_members,
    expect_bool,
    expect_list,
    expect_object,
    expect_str,
    fail,
    member,
)

#: members each driver takes besides "driver" and "path" (context resources included)
_MEMBERS: dict[str, tuple[str, ...]] = {
    "file": (
        "file_io_concurrency",
        "file_io_sync",
        "file_io_mode",
        "file_io_locking",
        "file_io_retries",
        "context",
    ),
    "memory": ("memory_key_value_store", "atomic", "context"),
    "s3": (
        "bucket",
        "requester_pays",
        "aws_region",
        "endpoint",
        "host_header",
        "use_conditional_write",
        "aws_credentials",
        "s3_request_concurrency",
        "s3_request_retries",
        "experimental_s3_rate_limiter",
        "data_copy_concurrency",
        "context",
    ),
    "gcs": (
        "bucket",
        "gcs_request_concurrency",
        "gcs_user_project",
        "gcs_request_retries",
        "experimental_gcs_rate_limiter",
        "gcs_http_version",
        "data_copy_concurrency",
        "context",
    ),
    "http": ("base_url", "headers", "http_request_concurrency", "http_request_retries", "context"),
    "zip": ("base", "cache_pool", "data_copy_concurrency", "context"),
    # zarrox's own: kerchunk/VirtualiZarr references (fsspec's reference:// options)
    "reference": (*sorted(REFERENCE_OPTIONS), "context"),
}
_URL_SCHEMES = {
    "file": "file",
    "memory": "memory",
    "s3": "s3",
    "gs": "gcs",
    "gcs": "gcs",
    "http": "http",
    "https": "http",
    "reference": "reference",
}


@dataclass
class KvStore:
    """A parsed kvstore: its driver, its path and the driver's other members. ``bound`` is a
    zarrox store this kvstore stands for (a memory store to reopen, or a store object), and
    ``bound_path`` the directory inside it."""

    driver: str
    path: str = ""
    members: dict[str, Any] = field(default_factory=dict)
    base: KvStore | None = None
    bound: Store | None = None
    bound_path: str = ""

    def to_json(self) -> dict[str, Any]:
        if self.driver == "store":
            raise UnsupportedError(
                f"{self.bound!r} has no TensorStore kvstore form; the spec can be opened by "
                "zarrox but not written as JSON"
            )
        out: dict[str, Any] = {"driver": self.driver}
        out.update(copy.deepcopy(self.members))
        if self.base is not None:
            out["base"] = self.base.to_json()
        if self.path:
            out["path"] = self.path
        return out

    def joined(self, path: str) -> KvStore:
        """This kvstore with ``path`` appended as a directory (TensorStore's join of
        ``kvstore.path`` and the driver's ``path``): the result ends in ``/``."""
        base = self.path
        if path:
            if base and not base.endswith("/"):
                base += "/"
            base += path
        if base and not base.endswith("/"):
            base += "/"
        bound_path = "/".join(p for p in (self.bound_path, path.strip("/")) if p)
        return KvStore(self.driver, base, dict(self.members), self.base, self.bound, bound_path)

    def url(self) -> str:
        """TensorStore's URL form of this kvstore."""
        if self.driver == "file":
            return "file://" + self.path
        if self.driver == "memory":
            return "memory://" + self.path
        if self.driver == "s3":
            return f"s3://{self.members.get('bucket', '')}/{self.path}"
        if self.driver == "gcs":
            return f"gs://{self.members.get('bucket', '')}/{self.path}"
        if self.driver == "http":
            return _http_url(self)
        if self.driver == "zip" and self.base is not None:
            return f"{self.base.url()}|zip:{self.path}"
        if self.driver == "reference" and isinstance(self.members.get("fo"), str):
            if set(self.members) - {"fo", "context"} or self.path:
                raise UnsupportedError("a reference kvstore with options or a path has no URL form")
            return "reference://" + self.members["fo"]
        raise UnsupportedError(f"kvstore {self.driver!r} has no URL form")


def _http_url(kv: KvStore) -> str:
    base = str(kv.members.get("base_url", ""))
    parts = urlsplit(base)
    path = quote(kv.path, safe="/%")  # TensorStore percent-encodes the path
    if path.startswith("/"):
        joined = path
    else:
        joined = parts.path.rstrip("/") + "/" + path if path else parts.path
    url = f"{parts.scheme}://{parts.netloc}{joined}"
    return url + (f"?{parts.query}" if parts.query else "")


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


def parse_kvstore(value: object, where: str = "kvstore") -> KvStore:
    if isinstance(value, KvStore):
        return value
    if isinstance(value, str):
        return parse_kvstore_url(value, where)
    obj = expect_object(value, where)
    driver = expect_str(obj.get("driver"), member(where, "driver"), tuple(_MEMBERS))
    check_members(obj, ("driver", "path", *_MEMBERS[driver]), where)
    path = expect_str(obj.get("path", ""), member(where, "path"))
    members = {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("driver", "path", "base")}
    kv = KvStore(driver, path, members)
    if driver in ("s3", "gcs"):
        expect_str(obj.get("bucket", ""), member(where, "bucket"))
        if driver == "gcs" and not obj.get("bucket"):
            raise fail(member(where, "bucket"), "a gcs kvstore needs a bucket")
    if driver == "http":
        base_url = expect_str(obj.get("base_url"), member(where, "base_url"))
        scheme = urlsplit(base_url).scheme
        if scheme not in ("http", "https"):
            raise fail(member(where, "base_url"), f"must be an http or https URL, got {base_url!r}")
        if obj.get("headers"):
            expect_list(obj["headers"], member(where, "headers"))
    if driver == "s3" and "requester_pays" in obj:
        expect_bool(obj["requester_pays"], member(where, "requester_pays"))
    if driver == "reference":
        if not isinstance(obj.get("fo"), str | dict) or not obj.get("fo"):
            raise fail(
                member(where, "fo"), "a reference kvstore needs its references (path, URL, object)"
            )
        for name in ("remote_options", "target_options", "prefix_options"):
            if name in obj:
                expect_object(obj[name], member(where, name))
    if driver == "zip":
        if "base" not in obj:
            raise fail(where, 'a zip kvstore needs member "base"')
        kv.base = parse_kvstore(obj["base"], member(where, "base"))
    return kv


def parse_kvstore_url(url: str, where: str = "kvstore") -> KvStore:
    """A kvstore URL, possibly a pipeline ``BASE|zip:PATH``."""
    parts = url.split("|")
    kv = _parse_single_url(parts[0], where)
    for part in parts[1:]:
        scheme, _, rest = part.partition(":")
        if scheme != "zip":
            raise fail(where, f"unsupported kvstore URL component {part!r} in {url!r}")
        kv = KvStore("zip", rest, base=kv)
    return kv


def _parse_single_url(url: str, where: str) -> KvStore:
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in _URL_SCHEMES:
        raise fail(
            where,
            f"unsupported kvstore URL {url!r}: expected file://, memory://, s3://, gs://, "
            "http(s)://, reference:// (optionally followed by |zip:PATH)",
        )
    driver = _URL_SCHEMES[scheme]
    if driver in ("file", "memory"):
        return KvStore(driver, rest)
    if driver == "reference":
        if not rest:
            raise fail(where, f"{url!r} names no references")
        return KvStore(driver, "", {"fo": rest})
    if driver in ("s3", "gcs"):
        bucket, _, path = rest.partition("/")
        if not bucket:
            raise fail(where, f"{url!r} names no bucket")
        return KvStore(driver, path, {"bucket": bucket})
    parts = urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}" + (f"?{parts.query}" if parts.query else "")
    return KvStore("http", parts.path, {"base_url": base})


# --------------------------------------------------------------------------------------------
# Onto zarrox stores
# --------------------------------------------------------------------------------------------


def _resolve(url: str, storage_options: dict[str, Any] | None, where: str, driver: str) -> Store:
    kwargs: dict[str, Any] = {}
    if storage_options:
        if "storage_options" not in inspect.signature(resolve_store).parameters:
            raise UnsupportedError(
                f"{where}: this zarrox build cannot pass credentials or endpoints to stores"
            )
        kwargs["storage_options"] = storage_options
    try:
        return resolve_store(url, **kwargs)
    except (ValueError, TypeError) as e:
        raise UnsupportedError(
            f"{where}: the {driver!r} kvstore needs a zarrox store for {url!r}, which this "
            f"build cannot open: {e}"
        ) from None


def _aws_options(kv: KvStore, where: str) -> dict[str, Any]:
    m = kv.members
    options: dict[str, Any] = {}
    if m.get("endpoint"):
        options["endpoint_url"] = m["endpoint"]
    if m.get("aws_region"):
        options["region"] = m["aws_region"]
    if m.get("requester_pays"):
        raise UnsupportedError(f"{member(where, 'requester_pays')}: not supported by zarrox")
    if m.get("host_header"):
        raise UnsupportedError(f"{member(where, 'host_header')}: not supported by zarrox")
    creds = m.get("aws_credentials")
    if isinstance(creds, dict):
        kind = creds.get("type", "default")
        if kind == "anonymous":
            options["anon"] = True
        elif kind == "profile" or creds.get("profile"):
            options["profile"] = creds.get("profile", "default")
        elif kind not in ("default", "environment", "imds", "ecs"):
            raise UnsupportedError(
                f"{member(where, 'aws_credentials')}.type: {kind!r} is not supported by zarrox"
            )
    return options


def open_kvstore(kv: KvStore, where: str = "kvstore") -> tuple[Store, str]:
    """(zarrox store, node path inside it) for the array directory ``kv`` names."""
    if kv.bound is not None:
        return kv.bound, kv.bound_path
    if kv.driver == "file":
        path = kv.path.rstrip("/") or ("/" if kv.path.startswith("/") else ".")
        return LocalStore(path), ""
    if kv.driver == "memory":
        return MemoryStore(), kv.path.strip("/")
    if kv.driver == "s3":
        url = f"s3://{kv.members.get('bucket', '')}/{kv.path}".rstrip("/")
        return _resolve(url, _aws_options(kv, where), where, "s3"), ""
    if kv.driver == "gcs":
        if kv.members.get("gcs_user_project"):
            raise UnsupportedError(f"{member(where, 'gcs_user_project')}: not supported by zarrox")
        url = f"gs://{kv.members['bucket']}/{kv.path}".rstrip("/")
        return _resolve(url, None, where, "gcs"), ""
    if kv.driver == "http":
        if kv.members.get("headers"):
            raise UnsupportedError(f"{member(where, 'headers')}: not supported by zarrox")
        return _resolve(_http_url(kv).rstrip("/"), None, where, "http"), ""
    if kv.driver == "zip":
        assert kv.base is not None
        if kv.base.driver != "file":
            raise UnsupportedError(
                f"{member(where, 'base')}: zarrox opens zip archives in local files only, got a "
                f"{kv.base.driver!r} base"
            )
        zip_path = kv.base.path.rstrip("/")
        return _resolve("zip://" + zip_path, None, where, "zip"), kv.path.strip("/")
    if kv.driver == "reference":
        options = {k: v for k, v in kv.members.items() if k != "context"}
        return _resolve("reference://", options, where, "reference"), kv.path.strip("/")
    raise UnsupportedError(f"{member(where, 'driver')}: {kv.driver!r} is not supported")


def kvstore_of(store: Store, path: str) -> KvStore:
    """The kvstore of the array at ``path`` in a zarrox store (for ``Array.spec()``)."""
    sub = path.strip("/")
    if isinstance(store, LocalStore):
        root = os.fspath(Path(store.root).resolve())
        full = root.rstrip("/") + ("/" + sub if sub else "")
        return KvStore("file", full + "/")
    if isinstance(store, MemoryStore):
        return KvStore("memory", sub + "/" if sub else "", bound=store, bound_path=sub)
    if isinstance(store, ReferenceStore):
        members = store.spec_members()
        if members is not None:
            return KvStore("reference", sub + "/" if sub else "", members, None, store, sub)
        return KvStore("store", sub, bound=store, bound_path=sub)
    url = getattr(store, "url", None)
    if isinstance(url, str):
        kv = _kvstore_of_url(url, sub)
        if kv is not None:
            kv.bound, kv.bound_path = store, sub
            return kv
    return KvStore("store", sub, bound=store, bound_path=sub)


def _kvstore_of_url(url: str, sub: str) -> KvStore | None:
    scheme, sep, rest = url.partition("://")
    if not sep:
        return None
    if scheme == "zip":
        base = KvStore("file", rest.split("|")[0])
        return KvStore("zip", sub + "/" if sub else "", base=base)
    if scheme not in _URL_SCHEMES or scheme in ("memory",):
        return None
    kv = parse_kvstore_url(url)
    return kv.joined(sub)

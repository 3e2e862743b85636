"""``storage_options`` as users write them for fsspec (s3fs, gcsfs, adlfs) or for the
``object_store`` crate, turned into the crate's configuration keys.

Both spellings are accepted: ``{"anon": True, "endpoint_url": ..., "key": ..., "secret": ...}``
(s3fs), ``{"client_kwargs": {"endpoint_url": ..., "region_name": ...}}`` (s3fs through
botocore), and ``{"aws_endpoint": ..., "aws_region": ...}`` (object_store). Without options
the environment's credentials and settings are used (``AWS_ACCESS_KEY_ID``,
``AWS_ENDPOINT_URL``, ``GOOGLE_APPLICATION_CREDENTIALS``, ...), read by Rust when the store
is built, so they are never copied into a pickle.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

#: URL schemes of object stores, by kind.
SCHEMES = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gcs",
    "gcs": "gcs",
    "az": "azure",
    "azure": "azure",
    "abfs": "azure",
    "abfss": "azure",
    "adl": "azure",
    "http": "http",
    "https": "http",
}

#: Options every kind takes: seconds (numbers) or object_store duration strings.
_DURATIONS = ("timeout", "connect_timeout", "pool_idle_timeout")
#: zarrox's own retry options (see rust/store/object.rs).
_OWN = ("max_retries", "retry_timeout", "backoff_initial", "backoff_max")

#: fsspec spellings, per kind: fsspec name -> object_store key.
_RENAMES: dict[str, dict[str, str]] = {
    "s3": {
        "key": "aws_access_key_id",
        "secret": "aws_secret_access_key",
        "token": "aws_session_token",
        "endpoint_url": "aws_endpoint",
        "region": "aws_region",
        "region_name": "aws_region",
    },
    "gcs": {
        "token": "google_service_account",
    },
    "azure": {
        "account_name": "azure_storage_account_name",
        "account_key": "azure_storage_account_key",
        "sas_token": "azure_storage_sas_key",
        "connection_string": "azure_storage_connection_string",
    },
    "http": {},
}

#: How each kind says "no credentials".
_ANONYMOUS = {
    "s3": "aws_skip_signature",
    "gcs": "google_skip_signature",
    "azure": "azure_skip_signature",
}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def object_store_options(
    url: str, storage_options: Mapping[str, Any] | None
) -> list[tuple[str, str]]:
    """The object_store configuration for the store at ``url`` (a URL with a scheme of
    :data:`SCHEMES`) from ``storage_options``; ValueError for options of another kind."""
    scheme = url.split("://", 1)[0].lower()
    kind = SCHEMES.get(scheme)
    if kind is None:
        raise ValueError(f"unsupported store URL {url!r}")
    opts = dict(storage_options or {})
    out: dict[str, str] = {}
    client_kwargs = opts.pop("client_kwargs", None) or {}
    if not isinstance(client_kwargs, Mapping):
        raise ValueError("storage option 'client_kwargs' must be a dict")
    for k, v in client_kwargs.items():
        if k in ("endpoint_url", "region_name") and kind == "s3":
            opts.setdefault(k, v)
        else:
            raise ValueError(f"unsupported storage option client_kwargs[{k!r}]")
    anon = opts.pop("anon", None)
    if anon:
        if kind not in _ANONYMOUS:
            raise ValueError(f"storage option 'anon' does not apply to {scheme}:// stores")
        out[_ANONYMOUS[kind]] = "true"
    if kind == "gcs" and opts.get("token") == "anon":
        opts.pop("token")
        out[_ANONYMOUS["gcs"]] = "true"
    for k, v in opts.items():
        if v is None:
            continue
        name = _RENAMES[kind].get(k, k)
        if k in _DURATIONS and isinstance(v, int | float) and not isinstance(v, bool):
            out[name] = f"{float(v)}s"
        elif k in _OWN:
            out[name] = _text(v)
        else:
            out[name] = _text(v)
    endpoint = out.get("aws_endpoint") or (
        os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT")
        if kind == "s3"
        else None
    )
    if kind == "s3" and endpoint and endpoint.startswith("http://"):
        out.setdefault("allow_http", "true")
    if kind == "http" and scheme == "http":
        out.setdefault("allow_http", "true")
    return sorted(out.items())

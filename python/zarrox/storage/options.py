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


# --------------------------------------------------------------------------------------------
# fsspec file systems (zarr-python's FsspecStore) as the same Rust stores
# --------------------------------------------------------------------------------------------

#: Options that steer only the Python file system (its caches, event loop, block sizes):
#: nothing a Rust store reads or writes depends on them.
_FS_PYTHON_ONLY = frozenset(
    {
        "asynchronous",
        "loop",
        "skip_instance_cache",
        "use_listings_cache",
        "listings_expiry_time",
        "max_paths",
        "default_block_size",
        "default_fill_cache",
        "default_cache_type",
        "max_concurrency",
        "batch_size",
    }
)

#: gcsfs (its classic and its 2026 class)
_GCSFS = (
    "gs",
    frozenset({"token"}),
    frozenset(
        {"project", "access", "consistency", "cache_timeout", "secure_serialize"}
        | {"check_connection", "requests_timeout", "block_size"}
    ),
)

#: Per file system class (module, name): the options translated to the Rust store (the
#: fsspec spellings :func:`object_store_options` knows) and the other options that steer
#: only the Python side. A file system of another class, or given any other option, is
#: not mapped: it stays served from Python.
_FS_KINDS: dict[tuple[str, str], tuple[str, frozenset[str], frozenset[str]]] = {
    ("s3fs.core", "S3FileSystem"): (
        "s3",
        frozenset(
            {"key", "secret", "token", "anon", "endpoint_url", "client_kwargs", "username"}
            | {"password"}
        ),
        frozenset({"fixed_upload_size", "cache_regions"}),
    ),
    ("gcsfs.core", "GCSFileSystem"): _GCSFS,
    # (gcsfs 2026's GCSFileSystem where it can be: the same objects, hierarchical buckets too)
    ("gcsfs.extended_gcsfs", "ExtendedGcsFileSystem"): _GCSFS,
    ("adlfs.spec", "AzureBlobFileSystem"): (
        "az",
        frozenset(
            {"account_name", "account_key", "sas_token", "connection_string", "anon"}
            | {"client_id", "client_secret", "tenant_id"}
        ),
        frozenset({"blocksize", "assume_container_exists", "socket_timeout"}),
    ),
    # (zarrox's local store makes the directories it writes into: auto_mkdir or not)
    ("fsspec.implementations.local", "LocalFileSystem"): (
        "file",
        frozenset(),
        frozenset({"auto_mkdir"}),
    ),
    ("fsspec.implementations.http", "HTTPFileSystem"): (
        "http",
        frozenset(),
        frozenset(
            {"simple_links", "block_size", "same_scheme", "size_policy", "cache_type"}
            | {"cache_options", "encoded"}
        ),
    ),
}


def unwrapped_fs(fs: Any) -> Any:
    """The file system fsspec's ``AsyncFileSystemWrapper`` wraps (else ``fs``)."""
    sync_fs = getattr(fs, "sync_fs", None)
    if type(fs).__name__ == "AsyncFileSystemWrapper" and sync_fs is not None:
        return sync_fs
    return fs


def fsspec_target(fs: Any, path: str) -> tuple[str, dict[str, Any]] | None:
    """Where the fsspec file system ``fs`` at ``path`` (an ``FsspecStore``'s) keeps its
    values, as the URL and ``storage_options`` of the Rust store that reads and writes
    the same objects with the same credentials (``("file", {})`` and the directory for a
    local file system: see :func:`zarrox.storage.from_zarr_store`); None where it cannot be
    said faithfully (another file system, an option with no Rust equivalent, credentials
    only Python's clients find): that file system stays served from Python."""
    fs = unwrapped_fs(fs)
    kind = _FS_KINDS.get((type(fs).__module__, type(fs).__name__))
    if kind is None:
        return None
    scheme, translated, python_only = kind
    given = {
        k: v for k, v in dict(getattr(fs, "storage_options", {})).items() if v not in (None, {})
    }
    opts = {k: v for k, v in given.items() if k not in _FS_PYTHON_ONLY | python_only}
    if set(opts) - translated:
        return None
    path = str(path)
    if scheme == "file":
        return ("file", {}) if os.path.isabs(path) else None
    if scheme == "http":
        head = path.split("://", 1)[0].lower()
        return (path, {}) if head in ("http", "https") else None
    mapped = {"s3": _s3fs_options, "gs": _gcsfs_options, "az": _adlfs_options}[scheme](opts)
    if mapped is None:
        return None
    url = f"{scheme}://{path.strip('/')}"
    try:
        object_store_options(url, mapped)
    except ValueError:
        return None
    return url, mapped


def _s3fs_options(opts: dict[str, Any]) -> dict[str, Any] | None:
    if opts.pop("anon", False):
        opts["anon"] = True
    for alias, name in (("username", "key"), ("password", "secret")):
        if alias in opts:
            opts.setdefault(name, opts.pop(alias))
    explicit = any(k in opts for k in ("key", "secret", "token", "anon"))
    if not explicit and not os.environ.get("AWS_ACCESS_KEY_ID"):
        # s3fs (botocore) would read a profile of ~/.aws: object_store does not
        home = os.path.expanduser("~/.aws")
        shared = (
            os.environ.get("AWS_SHARED_CREDENTIALS_FILE") or os.path.join(home, "credentials"),
            os.environ.get("AWS_CONFIG_FILE") or os.path.join(home, "config"),
        )
        if os.environ.get("AWS_PROFILE") or any(os.path.exists(p) for p in shared):
            return None
    return opts


def _gcsfs_options(opts: dict[str, Any]) -> dict[str, Any] | None:
    token = opts.pop("token", None)
    if token in (None, "google_default"):
        return opts  # the environment's credentials, as google.auth.default finds them
    if token == "anon":
        return {**opts, "anon": True}
    if isinstance(token, Mapping):
        import json

        return {**opts, "google_service_account_key": json.dumps(dict(token))}
    if isinstance(token, str | os.PathLike) and os.path.isfile(token):
        return {**opts, "google_service_account": os.fspath(token)}
    return None  # "cloud", "browser", "cache", a credentials object: Python's clients only


def _adlfs_options(opts: dict[str, Any]) -> dict[str, Any] | None:
    if opts.pop("anon", False):
        opts["anon"] = True
    if "connection_string" in opts:
        parts = _connection_string(str(opts.pop("connection_string")))
        if parts is None:
            return None
        for k, v in parts.items():
            opts.setdefault(k, v)
    for name, key in (
        ("client_id", "azure_client_id"),
        ("client_secret", "azure_client_secret"),
        ("tenant_id", "azure_tenant_id"),
    ):
        if name in opts:
            opts[key] = opts.pop(name)
    if "account_name" not in opts and (
        not os.environ.get("AZURE_STORAGE_ACCOUNT_NAME")
        or os.environ.get("AZURE_STORAGE_CONNECTION_STRING")
    ):
        return None  # adlfs would read a connection string of the environment: Rust does not
    return opts


def _connection_string(text: str) -> dict[str, Any] | None:
    """An Azure storage connection string's account, key or SAS token and endpoint as
    storage options; None for one with other parts."""
    fields: dict[str, str] = {}
    for part in text.strip().strip(";").split(";"):
        name, sep, value = part.partition("=")
        if not sep:
            return None
        fields[name.strip()] = value.strip()
    out: dict[str, Any] = {}
    names = {"AccountName": "account_name", "AccountKey": "account_key"}
    names["SharedAccessSignature"] = "sas_token"
    for name, value in fields.items():
        if name in names:
            out[names[name]] = value
        elif name == "BlobEndpoint":
            out["azure_storage_endpoint"] = value
            if value.startswith("http://"):
                out["allow_http"] = "true"
        elif name == "DefaultEndpointsProtocol" and value in ("https", "http"):
            if value == "http":
                out["allow_http"] = "true"
        elif not (name == "EndpointSuffix" and value == "core.windows.net"):
            return None
    if "azure_storage_endpoint" not in out and fields.get("DefaultEndpointsProtocol") == "http":
        return None  # an account's plain-HTTP default endpoint: not built here
    return out

//! The crate's one error type. Each kind maps to one Python exception class in
//! `zarrox.errors` (see `python/mod.rs`); messages carry the array and chunk key.

use std::fmt;

/// What went wrong, coarse enough to pick a Python exception class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Metadata or a codec configuration is malformed.
    Metadata,
    /// A codec, data type or feature that this build does not support.
    Unsupported,
    /// A codec of a chain that zarrox does not know (`UnknownCodecError`).
    UnknownCodec,
    /// Stored bytes could not be decoded (truncated, corrupt, wrong size).
    Corrupt,
    /// A checksum did not match.
    Checksum,
    /// The store failed (I/O).
    Store,
    /// A key or node does not exist where one is required.
    NotFound,
    /// A selection is out of bounds or malformed.
    Index,
    /// An index is past the end of its axis (zarr-python's `BoundsCheckError`).
    Bounds,
    /// A slice steps backwards (zarr-python's `NegativeStepError`).
    NegativeStep,
    /// A vectorized selection holds what it cannot (zarr-python's
    /// `VindexInvalidSelectionError`).
    InvalidSelection,
    /// An argument has the wrong type.
    Type,
    /// A value has the wrong size or type.
    Value,
    /// A TensorStore-style JSON spec or index transform is invalid
    /// (`zarrox.errors.SpecError`).
    Spec,
    /// A spec's constraint does not match what it meets: a stored array, or
    /// another constraint (`zarrox.errors.SpecMismatchError`).
    SpecMismatch,
    /// Memory for a buffer could not be had.
    Memory,
    /// The store refused access (credentials, permissions).
    Permission,
    /// A store request timed out.
    Timeout,
    /// A value changed while it was being read (read it again).
    Changed,
    /// A write's condition kept failing: other writers committed first each
    /// time it merged (zarrox's `WriteConflictError`).
    Conflict,
}

/// An error with its kind and a human-readable message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }
    pub fn metadata(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Metadata, message)
    }
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, message)
    }
    pub fn corrupt(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Corrupt, message)
    }
    pub fn checksum(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Checksum, message)
    }
    pub fn store(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Store, message)
    }
    pub fn index(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Index, message)
    }
    pub fn spec(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Spec, message)
    }
    pub fn spec_mismatch(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::SpecMismatch, message)
    }
    pub fn value(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Value, message)
    }
    pub fn memory(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Memory, message)
    }

    /// Prefix the message with where it happened, e.g. `array 'a/b', chunk 'a/b/c/0/1'`.
    pub fn context(self, prefix: impl fmt::Display) -> Self {
        Error {
            kind: self.kind,
            message: format!("{prefix}: {}", self.message),
        }
    }

    /// Prefix the message with the array it happened in: `array 'a/b', chunk
    /// 'a/b/c/0/1': ...` when it names a chunk already, else `array 'a/b': ...`.
    pub fn in_array(self, path: &str) -> Self {
        let sep = if self.message.starts_with("chunk '") {
            ", "
        } else {
            ": "
        };
        Error {
            kind: self.kind,
            message: format!("array '{path}'{sep}{}", self.message),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        let kind = if e.kind() == std::io::ErrorKind::NotFound {
            ErrorKind::NotFound
        } else {
            ErrorKind::Store
        };
        Error::new(kind, e.to_string())
    }
}

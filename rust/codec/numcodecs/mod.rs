//! numcodecs-compatible codecs (Zarr v2 compressors and filters), named
//! `numcodecs.<id>` as zarr-python names them in v3 metadata.

use serde_json::{Map, Value};

use super::{AnyCodec, ChunkSpec};
use crate::error::Result;

/// The codec `name` if it is a numcodecs codec, else `None`.
pub(crate) fn build(
    name: &str,
    _config: &Map<String, Value>,
    _spec: &ChunkSpec,
) -> Option<Result<AnyCodec>> {
    let _id = name.strip_prefix("numcodecs.")?;
    None
}

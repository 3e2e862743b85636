//! numcodecs codecs whose configurations zarrox knows (their defaults are a
//! fact about numcodecs, not about decoding) but that the core cannot decode:
//! `pickle` (Python runs it, `pickle_codec.py`).

use serde_json::{Map, Value};

use crate::codec::config::Members;
use crate::error::Result;

/// numcodecs' `Pickle(protocol=pickle.HIGHEST_PROTOCOL)`: 5 on every Python
/// zarrox supports (no core codec: zarrox never unpickles through the core).
pub const PICKLE_MEMBERS: &[&str] = &["protocol"];
const PICKLE_HIGHEST_PROTOCOL: i64 = 5;

pub fn complete_pickle(config: &Map<String, Value>, _: usize) -> Result<Members> {
    super::check_config("pickle", config, PICKLE_MEMBERS)?;
    let protocol = crate::codec::config::int_member(
        "numcodecs.pickle",
        config,
        "protocol",
        -1,
        PICKLE_HIGHEST_PROTOCOL,
    )?;
    Ok(vec![(
        "protocol",
        protocol.unwrap_or(PICKLE_HIGHEST_PROTOCOL).into(),
    )])
}

//! numcodecs codecs whose configurations zarrox knows (their defaults are a
//! fact about numcodecs, not about decoding) but that the core cannot decode:
//! `categorize` and `pickle`.

use serde_json::{Map, Value};

use crate::codec::config::Members;
use crate::error::Result;

/// numcodecs' `Categorize(labels, dtype, astype="u1")` (no core codec).
pub const CATEGORIZE_MEMBERS: &[&str] = &["labels", "dtype", "astype"];
/// numcodecs' `Pickle(protocol=pickle.HIGHEST_PROTOCOL)`: 5 on every Python
/// zarrox supports (no core codec: zarrox never unpickles through the core).
pub const PICKLE_MEMBERS: &[&str] = &["protocol"];
const PICKLE_HIGHEST_PROTOCOL: i64 = 5;

pub fn complete_categorize(config: &Map<String, Value>, _: usize) -> Result<Members> {
    let id = "categorize";
    super::check_config(id, config, CATEGORIZE_MEMBERS)?;
    let labels = super::required(id, "labels", &config.get("labels").cloned())?;
    let dtype = super::required(id, "dtype", &super::dtype_member(id, config, "dtype")?)?;
    let astype = super::dtype_member(id, config, "astype")?.unwrap_or_else(|| "|u1".into());
    Ok(vec![
        ("labels", labels),
        ("dtype", dtype.into()),
        ("astype", astype.into()),
    ])
}

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

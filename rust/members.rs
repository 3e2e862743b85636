//! A complete configuration (of a codec, a chunk grid, a chunk key encoding) as
//! JSON members in the order zarr-python writes them: what the codecs and the
//! chunk grids both hand to the Python metadata layer.

use serde_json::Value;

/// A complete configuration: its members in the order zarr-python writes them
/// (`serde_json::Map` sorts its keys).
pub type Members = Vec<(&'static str, Value)>;

/// `members` as a JSON object, in their order.
pub fn members_json(members: &[(&str, Value)]) -> String {
    let items: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}:{v}", Value::from(*k)))
        .collect();
    format!("{{{}}}", items.join(","))
}

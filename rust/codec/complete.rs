//! A codec's complete configuration: its members checked against the codec and
//! every default filled in, in the order zarr-python (or numcodecs, for the
//! `numcodecs.<id>` codecs) writes them. The one place the defaults of codec
//! configurations live: the codecs build from the same parsers, and the
//! Python metadata layer asks here (`_core.codec_configuration`).
//!
//! What depends on the array rather than on the codec stays with the caller:
//! the item size that blosc's `typesize` and `shuffle` default to, whether a
//! data type has a byte order (the `bytes` codec then drops `endian`), and the
//! checks of `transpose` orders and sharding shapes against the chunks.

use serde_json::{Map, Value};

use super::config::{check_members, Members};
use super::numcodecs;
use super::{blosc, bytes, cast_value, gzip, name_and_config, packbits, sharding, zstd};
use crate::error::{Error, Result};

/// The complete configuration of `codec` (`{"name", "configuration"}` or a
/// bare name) for chunks of `item_size`-byte elements (1 for variable-length
/// data types). Errors are the codec's own: `Metadata` for a malformed
/// configuration, `Unsupported` for a codec or option zarrox does not have.
pub fn complete_config(codec: &Value, item_size: usize) -> Result<Members> {
    let (name, config) = name_and_config(codec)?;
    complete_named(name, &config, item_size)
}

fn complete_named(name: &str, config: &Map<String, Value>, item_size: usize) -> Result<Members> {
    // A v3 document gives a member or leaves it out (numcodecs' configurations
    // write null for some defaults, cast_value's optional members may be null).
    if !name.starts_with("numcodecs.") {
        let nullable: &[&str] = match name {
            "cast_value" => &["out_of_range", "scalar_map"],
            "packbits" => &["first_bit", "last_bit", "start_bit", "end_bit"],
            _ => &[],
        };
        let null = config
            .iter()
            .find(|(k, v)| v.is_null() && !nullable.contains(&k.as_str()));
        if let Some((key, _)) = null {
            return Err(Error::metadata(format!(
                "codec '{name}': '{key}' must not be null"
            )));
        }
    }
    match name {
        "gzip" => Ok(gzip::GzipConfig::parse(config)?.members()),
        "zstd" => Ok(zstd::ZstdConfig::parse(config)?.members()),
        "blosc" => Ok(blosc::BloscConfig::parse(config, item_size)?.members()),
        "bytes" => bytes::complete_config(config),
        "sharding_indexed" => sharding::complete_config(config),
        "cast_value" => cast_value::complete_config(config),
        "packbits" => packbits::complete_config(config),
        "crc32c" | "vlen-utf8" | "vlen-bytes" => {
            check_members(name, config, &[])?;
            Ok(Vec::new())
        }
        "transpose" => {
            check_members(name, config, &["order"])?;
            let order = config.get("order").ok_or_else(|| {
                Error::metadata("codec 'transpose': 'order' is required".to_string())
            })?;
            Ok(vec![("order", order.clone())])
        }
        "numcodecs.zlib" => numcodecs::zlib::complete_config(config),
        "numcodecs.gzip" => numcodecs::gzip::complete_config(config),
        "numcodecs.bz2" => numcodecs::bz2::complete_config(config),
        "numcodecs.zstd" => numcodecs::zstd::complete_config(config),
        "numcodecs.blosc" => numcodecs::blosc::complete_config(config),
        other => Err(Error::unsupported(format!(
            "codec '{other}': no configuration defaults are known for it"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::config::members_json;
    use serde_json::json;

    fn complete(codec: Value, item_size: usize) -> Result<Value> {
        let members = complete_config(&codec, item_size)?;
        Ok(serde_json::from_str(&members_json(&members)).unwrap())
    }

    fn keys(codec: Value, item_size: usize) -> Vec<&'static str> {
        complete_config(&codec, item_size)
            .unwrap()
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    #[test]
    fn v3_defaults_are_zarr_pythons() {
        assert_eq!(complete(json!("gzip"), 4).unwrap(), json!({"level": 5}));
        assert_eq!(
            complete(json!("zstd"), 4).unwrap(),
            json!({"level": 0, "checksum": false})
        );
        assert_eq!(
            complete(json!("blosc"), 4).unwrap(),
            json!({"typesize": 4, "cname": "zstd", "clevel": 5, "shuffle": "shuffle", "blocksize": 0})
        );
        assert_eq!(
            complete(json!("blosc"), 1).unwrap()["shuffle"],
            json!("bitshuffle")
        );
        assert_eq!(
            complete(json!("bytes"), 4).unwrap(),
            json!({"endian": "little"})
        );
        assert_eq!(
            complete(
                json!({"name": "sharding_indexed", "configuration": {"chunk_shape": [2]}}),
                4
            )
            .unwrap(),
            json!({
                "chunk_shape": [2],
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "crc32c"}
                ],
                "index_location": "end"
            })
        );
        assert_eq!(complete(json!("crc32c"), 4).unwrap(), json!({}));
        assert_eq!(
            complete(json!("packbits"), 4).unwrap(),
            json!({"padding_encoding": "none"})
        );
        assert_eq!(
            complete(json!({"name": "packbits", "configuration": {"padding_encoding": "end_byte", "first_bit": null}}), 4)
                .unwrap(),
            json!({"padding_encoding": "last_byte"})
        );
        assert_eq!(
            complete(
                json!({"name": "cast_value", "configuration": {"data_type": "int8"}}),
                4
            )
            .unwrap(),
            json!({"data_type": "int8", "rounding": "nearest-even", "out_of_range": null, "scalar_map": null})
        );
    }

    #[test]
    fn members_come_in_zarr_pythons_order() {
        assert_eq!(
            keys(json!("blosc"), 2),
            ["typesize", "cname", "clevel", "shuffle", "blocksize"]
        );
        assert_eq!(keys(json!("zstd"), 2), ["level", "checksum"]);
        assert_eq!(
            keys(json!({"name": "numcodecs.blosc", "configuration": {}}), 2),
            ["cname", "clevel", "shuffle", "blocksize"]
        );
    }

    #[test]
    fn given_members_are_kept() {
        let cfg = json!({"name": "blosc", "configuration": {
            "cname": "lz4", "clevel": 1, "shuffle": "noshuffle", "typesize": 8, "blocksize": 256}});
        assert_eq!(
            complete(cfg, 2).unwrap(),
            json!({"typesize": 8, "cname": "lz4", "clevel": 1, "shuffle": "noshuffle", "blocksize": 256})
        );
        let cfg = json!({"name": "zstd", "configuration": {"level": -5, "checksum": true}});
        assert_eq!(
            complete(cfg, 2).unwrap(),
            json!({"level": -5, "checksum": true})
        );
    }

    #[test]
    fn numcodecs_defaults_are_numcodecs() {
        let nc = |id: &str| complete(json!({"name": format!("numcodecs.{id}")}), 4).unwrap();
        assert_eq!(nc("zlib"), json!({"level": 1}));
        assert_eq!(nc("gzip"), json!({"level": 1}));
        assert_eq!(nc("bz2"), json!({"level": 1}));
        assert_eq!(nc("zstd"), json!({"level": 0, "checksum": false}));
        assert_eq!(
            nc("blosc"),
            json!({"cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0})
        );
    }

    #[test]
    fn malformed_configurations_are_errors() {
        use crate::error::ErrorKind::{Metadata, Unsupported};
        let kind = |codec: Value| complete(codec, 4).unwrap_err().kind;
        let with = |name: &str, cfg: Value| json!({"name": name, "configuration": cfg});
        assert_eq!(kind(with("gzip", json!({"level": 10}))), Metadata);
        assert_eq!(kind(with("gzip", json!({"level": true}))), Metadata);
        assert_eq!(kind(with("gzip", json!({"lvl": 1}))), Metadata);
        assert_eq!(kind(with("zstd", json!({"level": 23}))), Metadata);
        assert_eq!(kind(with("zstd", json!({"checksum": 1}))), Metadata);
        assert_eq!(kind(with("blosc", json!({"cname": "lzma"}))), Metadata);
        assert_eq!(kind(with("blosc", json!({"cname": "snappy"}))), Unsupported);
        assert_eq!(kind(with("blosc", json!({"shuffle": 1}))), Metadata);
        assert_eq!(kind(with("blosc", json!({"typesize": 0}))), Metadata);
        assert_eq!(kind(with("blosc", json!({"blocksize": -1}))), Metadata);
        assert_eq!(kind(with("bytes", json!({"endian": "native"}))), Metadata);
        assert_eq!(kind(with("crc32c", json!({"x": 1}))), Metadata);
        assert_eq!(kind(with("sharding_indexed", json!({}))), Metadata);
        assert_eq!(
            kind(with(
                "sharding_indexed",
                json!({"chunk_shape": [1], "index_location": "middle"})
            )),
            Metadata
        );
        assert_eq!(kind(with("transpose", json!({}))), Metadata);
        assert_eq!(kind(with("gzip", json!({"level": null}))), Metadata);
        assert_eq!(kind(with("bytes", json!({"endian": null}))), Metadata);
        assert_eq!(kind(json!("lzfse")), Unsupported);
        assert_eq!(kind(with("cast_value", json!({}))), Metadata);
        assert_eq!(
            kind(with("packbits", json!({"padding_encoding": "middle"}))),
            Metadata
        );
        assert_eq!(
            kind(with("packbits", json!({"padding_encoding": null}))),
            Metadata
        );
        assert_eq!(
            kind(with(
                "cast_value",
                json!({"data_type": "int8", "rounding": "up"})
            )),
            Metadata
        );
        assert_eq!(
            kind(with(
                "cast_value",
                json!({"data_type": "int8", "rounding": null})
            )),
            Metadata
        );
    }

    #[test]
    fn the_codecs_build_with_the_same_defaults() {
        // An incomplete configuration builds the codec its completion describes.
        let c = blosc::BloscConfig::parse(&Map::new(), 1).unwrap();
        assert_eq!((c.cname, c.shuffle, c.typesize), ("zstd", "bitshuffle", 1));
        assert_eq!(gzip::GzipConfig::parse(&Map::new()).unwrap().level, 5);
        assert_eq!(
            zstd::ZstdConfig::parse(&Map::new()).unwrap(),
            zstd::ZstdConfig::DEFAULT
        );
    }
}

//! A codec's complete configuration: its members checked against the codec and
//! every default filled in, in the order zarr-python (or numcodecs, for the
//! `numcodecs.<id>` codecs) writes them. The one place the defaults of codec
//! configurations live: the codecs build from the same parsers, and the
//! Python metadata layer asks here (`_core.codec_configuration`).
//!
//! What depends on the array rather than on the codec stays with the caller:
//! the item size that blosc's `typesize` and `shuffle` default to, whether a
//! data type has a byte order (the `bytes` codec then drops `endian`), and the
//! checks of `transpose` orders, sharding shapes and `reshape` shapes against
//! the chunks, the values of `scale_offset` as values of the data type, and the
//! numpy spelling of numcodecs' dtype members (`"int32"` is written `"<i4"`).

use serde_json::{Map, Value};

use super::config::Members;
use super::{name_and_config, registry};
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
    let entry = registry::lookup(name);
    // A v3 document gives a member or leaves it out; numcodecs writes null
    // for the defaults of a few members (cast_value's optional members may be
    // null too). pcodec and zfpy check their values when a chunk is encoded.
    let (nullable, any) = entry.map_or((&[][..], false), |e| (e.nullable, e.checked_when_encoding));
    let null = config
        .iter()
        .find(|(k, v)| v.is_null() && !nullable.contains(&k.as_str()) && !any);
    if let Some((key, _)) = null {
        return Err(Error::metadata(format!(
            "codec '{name}': '{key}' must not be null"
        )));
    }
    let entry = entry.ok_or_else(|| {
        Error::unsupported(format!(
            "codec '{name}': no configuration defaults are known for it"
        ))
    })?;
    entry.complete(config, item_size)
}

/// The members of numcodecs' `get_config()` of codec `id` (in its order,
/// without `"id"`), if its configuration is completed here: every numcodecs
/// codec the core has, and one it cannot decode (`pickle`: its default is a
/// fact about numcodecs, not about decoding).
pub fn numcodecs_members(id: &str) -> Option<&'static [&'static str]> {
    registry::lookup_numcodecs(id).and_then(|c| c.numcodecs_members)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::array_to_array::bitround;
    use crate::codec::bytes_to_bytes::{blosc, gzip, zstd};
    use crate::codec::config::members_json;
    use serde_json::json;
    use serde_json::Map;

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
    fn registry_codecs_complete_their_stored_members() {
        use crate::error::ErrorKind::Metadata;
        let with = |name: &str, cfg: Value| json!({"name": name, "configuration": cfg});
        assert_eq!(
            complete(json!("scale_offset"), 4).unwrap(),
            json!({"offset": 0, "scale": 1})
        );
        assert_eq!(
            keys(
                with("scale_offset", json!({"scale": "0.5", "offset": 3})),
                4
            ),
            ["offset", "scale"]
        );
        assert_eq!(
            complete(with("scale_offset", json!({"scale": "0.5"})), 4).unwrap(),
            json!({"offset": 0, "scale": "0.5"})
        );
        assert_eq!(
            complete(with("bitround", json!({"keepbits": 3})), 4).unwrap(),
            json!({"keepbits": 3})
        );
        assert_eq!(
            complete(with("reshape", json!({"shape": [[0, 1], -1]})), 4).unwrap(),
            json!({"shape": [[0, 1], -1]})
        );
        let err = |codec: Value| complete(codec, 4).unwrap_err();
        assert_eq!(
            err(json!("bitround")).message,
            "codec 'bitround': 'keepbits' is required"
        );
        assert_eq!(
            err(json!("reshape")).message,
            "codec 'reshape': 'shape' is required"
        );
        for codec in [
            with("bitround", json!({"keepbits": -1})),
            with("bitround", json!({"keepbits": 2, "component_size": 4})),
            with("bitround", json!({"keepbits": null})),
            with("scale_offset", json!({"shift": 1})),
            with("scale_offset", json!({"offset": null})),
            with("reshape", json!({"shape": [2], "order": "C"})),
        ] {
            assert_eq!(err(codec.clone()).kind, Metadata, "{codec}");
        }
    }

    #[test]
    fn bitround_mantissa_bits_are_the_formats() {
        assert_eq!(bitround::mantissa_bits("float16"), Some(10));
        assert_eq!(bitround::mantissa_bits("bfloat16"), Some(7));
        assert_eq!(bitround::mantissa_bits("float32"), Some(23));
        assert_eq!(bitround::mantissa_bits("float64"), Some(52));
        assert_eq!(bitround::mantissa_bits("int32"), None);
    }

    #[test]
    fn every_numcodecs_codec_completes_as_numcodecs() {
        let nc = |id: &str, cfg: Value| {
            complete(
                json!({"name": format!("numcodecs.{id}"), "configuration": cfg}),
                4,
            )
            .unwrap()
        };
        assert_eq!(nc("lz4", json!({})), json!({"acceleration": 1}));
        assert_eq!(
            nc("lzma", json!({})),
            json!({"format": 1, "check": -1, "preset": null, "filters": null})
        );
        assert_eq!(
            nc("lzma", json!({"preset": 9, "filters": null})),
            json!({"format": 1, "check": -1, "preset": 9, "filters": null})
        );
        assert_eq!(nc("shuffle", json!({})), json!({"elementsize": 4}));
        assert_eq!(
            nc("shuffle", json!({"elementsize": 0})),
            json!({"elementsize": 0})
        );
        for id in ["crc32", "adler32", "crc32c", "fletcher32", "packbits"] {
            assert_eq!(nc(id, json!({})), json!({}), "{id}");
        }
        assert_eq!(
            nc("crc32", json!({"location": "end"})),
            json!({"location": "end"})
        );
        assert_eq!(
            nc("jenkins_lookup3", json!({})),
            json!({"initval": 0, "prefix": null})
        );
        assert_eq!(
            nc("jenkins_lookup3", json!({"prefix": [1, 2], "initval": 7})),
            json!({"initval": 7, "prefix": [1, 2]})
        );
        assert_eq!(
            nc("bitround", json!({"keepbits": 3})),
            json!({"keepbits": 3})
        );
        assert_eq!(
            nc("delta", json!({"dtype": "<i4"})),
            json!({"dtype": "<i4", "astype": "<i4"})
        );
        assert_eq!(
            nc("delta", json!({"astype": "<i2", "dtype": "<i4"})),
            json!({"dtype": "<i4", "astype": "<i2"})
        );
        assert_eq!(
            nc(
                "fixedscaleoffset",
                json!({"offset": 1.5, "scale": 2, "dtype": "<f8", "astype": null})
            ),
            json!({"scale": 2, "offset": 1.5, "dtype": "<f8", "astype": "<f8"})
        );
        assert_eq!(
            nc("quantize", json!({"dtype": "<f4", "digits": 2})),
            json!({"digits": 2, "dtype": "<f4", "astype": "<f4"})
        );
        assert_eq!(
            nc(
                "astype",
                json!({"decode_dtype": "<f8", "encode_dtype": "<f4"})
            ),
            json!({"encode_dtype": "<f4", "decode_dtype": "<f8"})
        );
        assert_eq!(
            nc("categorize", json!({"labels": ["a"], "dtype": "<U1"})),
            json!({"labels": ["a"], "dtype": "<U1", "astype": "|u1"})
        );
        assert_eq!(nc("pickle", json!({})), json!({"protocol": 5}));
        assert_eq!(
            nc("pcodec", json!({})),
            json!({"level": 8, "mode_spec": "auto", "delta_spec": "auto",
                   "paging_spec": "equal_pages_up_to", "delta_encoding_order": null,
                   "equal_pages_up_to": 262_144})
        );
        // as numcodecs, pcodec and zfpy keep what they are given until they encode
        assert_eq!(nc("pcodec", json!({"level": null}))["level"], Value::Null);
        assert_eq!(
            nc("zfpy", json!({})),
            json!({"mode": 4, "compression_kwargs": {"tolerance": -1},
                   "tolerance": -1, "rate": -1, "precision": -1})
        );
        assert_eq!(
            nc(
                "zfpy",
                json!({"mode": 2, "rate": 8.5, "compression_kwargs": {"x": 1}})
            ),
            json!({"mode": 2, "compression_kwargs": {"rate": 8.5},
                   "tolerance": -1, "rate": 8.5, "precision": -1})
        );
        assert_eq!(
            keys(
                json!({"name": "numcodecs.zfpy", "configuration": {"mode": 1}}),
                4
            ),
            ["mode", "tolerance", "rate", "precision"]
        );
    }

    #[test]
    fn numcodecs_members_are_the_completions_keys() {
        let minimal = |id: &str| match id {
            "bitround" => json!({"keepbits": 1}),
            "delta" => json!({"dtype": "<i4"}),
            "fixedscaleoffset" => json!({"scale": 1, "offset": 0, "dtype": "<f8"}),
            "quantize" => json!({"digits": 1, "dtype": "<f8"}),
            "astype" => json!({"encode_dtype": "<f4", "decode_dtype": "<f8"}),
            "categorize" => json!({"labels": [], "dtype": "<U1"}),
            "crc32" | "adler32" | "crc32c" => json!({"location": "start"}),
            _ => json!({}),
        };
        let numcodecs = registry::CODECS
            .iter()
            .filter_map(|c| Some((c.name.strip_prefix("numcodecs.")?, c.numcodecs_members?)));
        for (id, members) in numcodecs {
            let codec = json!({"name": format!("numcodecs.{id}"), "configuration": minimal(id)});
            assert_eq!(&keys(codec, 4), members, "{id}");
            assert_eq!(numcodecs_members(id), Some(members));
        }
        assert_eq!(numcodecs_members("json2"), None);
        assert_eq!(numcodecs_members("vlen-utf8"), None);
    }

    #[test]
    fn numcodecs_errors() {
        use crate::error::ErrorKind::{Metadata, Unsupported};
        let err = |id: &str, cfg: Value| {
            complete(
                json!({"name": format!("numcodecs.{id}"), "configuration": cfg}),
                4,
            )
            .unwrap_err()
        };
        let required = |id: &str, cfg: Value, key: &str| {
            let e = err(id, cfg);
            assert_eq!(e.kind, Metadata);
            assert_eq!(
                e.message,
                format!("codec 'numcodecs.{id}': '{key}' is required")
            );
        };
        required("bitround", json!({}), "keepbits");
        required("delta", json!({}), "dtype");
        required(
            "fixedscaleoffset",
            json!({"scale": 1, "dtype": "<f8"}),
            "offset",
        );
        required(
            "fixedscaleoffset",
            json!({"offset": 1, "dtype": "<f8"}),
            "scale",
        );
        required(
            "fixedscaleoffset",
            json!({"offset": 1, "scale": 1}),
            "dtype",
        );
        required("quantize", json!({"dtype": "<f8"}), "digits");
        required("astype", json!({"encode_dtype": "<f8"}), "decode_dtype");
        required("astype", json!({"decode_dtype": "<f8"}), "encode_dtype");
        required("categorize", json!({"dtype": "<U1"}), "labels");
        required("categorize", json!({"labels": []}), "dtype");
        let null = err("delta", json!({"dtype": null}));
        assert_eq!(
            null.message,
            "codec 'numcodecs.delta': 'dtype' must not be null"
        );
        for (id, cfg) in [
            ("lz4", json!({"acceleration": "fast"})),
            ("lz4", json!({"acceleration": 1_i64 << 31})),
            ("lz4", json!({"speed": 1})),
            ("lzma", json!({"check": 2})),
            ("lzma", json!({"format": 3})),
            ("lzma", json!({"preset": 6, "filters": [{"id": 33}]})),
            ("shuffle", json!({"elementsize": 1.5})),
            ("crc32", json!({"location": "middle"})),
            ("fletcher32", json!({"location": "end"})),
            ("jenkins_lookup3", json!({"prefix": [300]})),
            ("jenkins_lookup3", json!({"initval": -1})),
            ("bitround", json!({"keepbits": -1})),
            ("delta", json!({"dtype": 4})),
            (
                "fixedscaleoffset",
                json!({"offset": "0", "scale": 1, "dtype": "<f8"}),
            ),
            ("quantize", json!({"digits": 1.5, "dtype": "<f8"})),
            (
                "categorize",
                json!({"labels": [], "dtype": "<U1", "astype": null}),
            ),
            ("pickle", json!({"protocol": 6})),
            ("pickle", json!({"protocol": null})),
        ] {
            assert_eq!(err(id, cfg.clone()).kind, Metadata, "{id} {cfg}");
        }
        assert_eq!(err("pcodec", json!({"levels": 1})).kind, Metadata);
        assert_eq!(err("json2", json!({})).kind, Unsupported);
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

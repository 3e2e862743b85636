//! The codec registry: one entry per codec, the one place a codec's rules
//! live outside its own module. An entry gives the codec's name (the v3
//! name; `numcodecs.<id>` for the numcodecs codecs, whose v2 form is the
//! numcodecs id), its kind (array->array, array->bytes, bytes->bytes), its
//! configuration members with their types and ranges, which members may be
//! null, whether its encoded size is fixed (a shard index may use it), how
//! its v3 JSON is written, the members TensorStore takes, how to build it for
//! a chunk (the array-dependent checks live in its `from_config`) and how to
//! complete its configuration (defaults, in zarr-python's or numcodecs'
//! order).
//!
//! Chain building ([`super::CodecChain::from_json`]), completion
//! ([`super::complete::complete_config`]), the order of a chain
//! ([`check_order`]) and the Python layer (`_core.codec_registry`, which
//! derives its name tables and TensorStore's codec options from
//! [`registry_json`]) all read it. Adding a codec: a module, and one entry in
//! [`CODECS`].

use serde_json::{Map, Value};

use super::array_to_array::{bitround, cast_value, reshape, scale_offset, transpose};
use super::array_to_bytes::{bytes, packbits, sharding, vlen};
use super::bytes_to_bytes::{blosc, crc32c, gzip, zstd};
use super::config::{check_members, Member, Members};
use super::numcodecs as nc;
use super::{AnyCodec, ChunkSpec};
use crate::error::Result;

/// Where a codec stands in a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    ArrayToArray,
    ArrayToBytes,
    BytesToBytes,
}

impl Kind {
    /// As the specification writes it: `"array->array"`...
    pub fn name(self) -> &'static str {
        match self {
            Kind::ArrayToArray => "array->array",
            Kind::ArrayToBytes => "array->bytes",
            Kind::BytesToBytes => "bytes->bytes",
        }
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        [Kind::ArrayToArray, Kind::ArrayToBytes, Kind::BytesToBytes]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

/// Build the codec for chunks of a spec from its configuration.
type Build = fn(&Map<String, Value>, &ChunkSpec) -> Result<AnyCodec>;
/// The complete configuration for chunks of `item_size`-byte elements.
type Complete = fn(&Map<String, Value>, usize) -> Result<Members>;

/// One codec's entry.
#[derive(Debug, Clone, Copy)]
pub struct Codec {
    /// Its v3 name (`numcodecs.<id>` for numcodecs' codecs).
    pub name: &'static str,
    pub kind: Kind,
    /// Its configuration members, with their types and ranges (the codec's
    /// parser reads the same constants); empty where the codec's module
    /// checks them itself.
    pub members: &'static [Member],
    /// numcodecs' codecs: the members of `get_config()`, in its order
    /// (without `"id"`); their v2 form is `{"id": <name without
    /// "numcodecs.">, ...}`.
    pub numcodecs_members: Option<&'static [&'static str]>,
    /// Members that may be null (numcodecs writes null for some defaults).
    pub nullable: &'static [&'static str],
    /// Whether any member may be null (the codec checks its values when a
    /// chunk is encoded, as numcodecs does).
    pub checked_when_encoding: bool,
    /// Whether its encoded size follows from its input's (a shard index may
    /// use it: zarr-python 3.4's rule for `index_codecs`).
    pub fixed_size: bool,
    /// Whether zarr-python writes it with `"configuration": {}` when empty.
    pub always_configured: bool,
    /// The members TensorStore's `zarr3` driver takes, for codecs it defines.
    pub tensorstore: Option<&'static [Member]>,
    /// `None`: a configuration zarrox completes but cannot decode with.
    build: Option<Build>,
    complete: Complete,
}

impl Codec {
    const fn new(name: &'static str, kind: Kind, build: Option<Build>, complete: Complete) -> Self {
        Codec {
            name,
            kind,
            members: &[],
            numcodecs_members: None,
            nullable: &[],
            checked_when_encoding: false,
            fixed_size: false,
            always_configured: false,
            tensorstore: None,
            build,
            complete,
        }
    }
    const fn members(self, members: &'static [Member]) -> Self {
        Codec { members, ..self }
    }
    const fn numcodecs(self, members: &'static [&'static str]) -> Self {
        Codec {
            numcodecs_members: Some(members),
            always_configured: true,
            ..self
        }
    }
    const fn nullable(self, nullable: &'static [&'static str]) -> Self {
        Codec { nullable, ..self }
    }
    const fn checked_when_encoding(self) -> Self {
        Codec {
            checked_when_encoding: true,
            ..self
        }
    }
    const fn fixed_size(self) -> Self {
        Codec {
            fixed_size: true,
            ..self
        }
    }
    const fn always_configured(self) -> Self {
        Codec {
            always_configured: true,
            ..self
        }
    }
    const fn tensorstore(self, members: &'static [Member]) -> Self {
        Codec {
            tensorstore: Some(members),
            ..self
        }
    }

    /// Whether zarrox can build (decode and encode with) this codec.
    pub fn decodes(&self) -> bool {
        self.build.is_some()
    }

    /// Whether it is one of numcodecs' codecs (`numcodecs.<id>`).
    pub fn is_numcodecs(&self) -> bool {
        self.name.starts_with("numcodecs.")
    }

    /// Whether a chain may name it: every v3 codec of zarrox's (some only
    /// complete their configuration) and the numcodecs codecs zarrox builds.
    pub fn implemented(&self) -> bool {
        !self.is_numcodecs() || self.decodes()
    }

    /// Build it for chunks of `spec`; `None` when zarrox only completes its
    /// configuration.
    pub(crate) fn build(
        &self,
        config: &Map<String, Value>,
        spec: &ChunkSpec,
    ) -> Option<Result<AnyCodec>> {
        self.build.map(|b| b(config, spec))
    }

    /// Its complete configuration for chunks of `item_size`-byte elements.
    pub fn complete(&self, config: &Map<String, Value>, item_size: usize) -> Result<Members> {
        (self.complete)(config, item_size)
    }

    /// What an empty configuration completes to (for one-byte elements), as
    /// `[key, value]` pairs in the codec's order; null for a codec with
    /// required members.
    pub fn defaults(&self) -> Value {
        self.complete(&Map::new(), 1)
            .map_or(Value::Null, |members| {
                members
                    .into_iter()
                    .map(|(k, v)| Value::from(vec![Value::from(k), v]))
                    .collect()
            })
    }

    /// The entry as JSON, for the Python layer.
    pub fn to_json(&self) -> Value {
        let members = |m: &[Member]| Value::from(m.iter().map(Member::to_json).collect::<Vec<_>>());
        serde_json::json!({
            "name": self.name,
            "kind": self.kind.name(),
            "members": members(self.members),
            "numcodecs_members": self.numcodecs_members,
            "v2_id": self.numcodecs_members.and(self.name.strip_prefix("numcodecs.")),
            "nullable": self.nullable,
            "fixed_size": self.fixed_size,
            "always_configured": self.always_configured,
            "tensorstore": self.tensorstore.map(members),
            "decodes": self.decodes(),
            "defaults": self.defaults(),
        })
    }
}

/// The built codec of each kind, as the chain takes it.
fn a(codec: impl super::ArrayToArrayCodec + 'static) -> AnyCodec {
    AnyCodec::ArrayToArray(Box::new(codec))
}
fn s(codec: impl super::ArrayToBytesCodec + 'static) -> AnyCodec {
    AnyCodec::ArrayToBytes(Box::new(codec))
}
fn b(codec: impl super::BytesToBytesCodec + 'static) -> AnyCodec {
    AnyCodec::BytesToBytes(Box::new(codec))
}

use Kind::{ArrayToArray, ArrayToBytes, BytesToBytes};

/// A configuration with no members: checked to be empty.
fn no_members(name: &str, config: &Map<String, Value>) -> Result<Members> {
    check_members(name, config, &[])?;
    Ok(Vec::new())
}

/// Every codec zarrox knows, v3 codecs first (in the order the Python layer
/// lists them), then numcodecs' (filters, serializers, bytes codecs, and the
/// two whose configurations only are known).
pub static CODECS: &[Codec] = &[
    Codec::new(
        "transpose",
        ArrayToArray,
        Some(|c, spec| transpose::TransposeCodec::from_config(c, spec).map(a)),
        |c, _| transpose::complete_config(c),
    )
    .members(transpose::MEMBERS)
    .tensorstore(transpose::MEMBERS)
    .fixed_size(),
    Codec::new(
        "scale_offset",
        ArrayToArray,
        Some(|c, spec| scale_offset::ScaleOffsetCodec::from_config(c, spec).map(a)),
        |c, _| scale_offset::complete_config(c),
    )
    .fixed_size(),
    Codec::new(
        "cast_value",
        ArrayToArray,
        Some(|c, spec| cast_value::CastValueCodec::from_config(c, spec).map(a)),
        |c, _| cast_value::complete_config(c),
    )
    .members(cast_value::MEMBERS)
    .nullable(&["out_of_range", "scalar_map"])
    .fixed_size(),
    Codec::new(
        "bitround",
        ArrayToArray,
        Some(|c, spec| bitround::BitroundCodec::from_config(c, spec).map(a)),
        |c, _| bitround::complete_config(c),
    )
    .members(bitround::MEMBERS),
    Codec::new(
        "reshape",
        ArrayToArray,
        Some(|c, spec| reshape::ReshapeCodec::from_config(c, spec).map(a)),
        |c, _| reshape::complete_config(c),
    ),
    Codec::new(
        "bytes",
        ArrayToBytes,
        Some(|c, spec| bytes::BytesCodec::from_config(c, spec).map(s)),
        |c, _| bytes::complete_config(c),
    )
    .members(bytes::MEMBERS)
    .tensorstore(bytes::MEMBERS)
    .fixed_size(),
    Codec::new(
        "sharding_indexed",
        ArrayToBytes,
        Some(|c, spec| sharding::ShardingCodec::from_config(c, spec).map(s)),
        |c, _| sharding::complete_config(c),
    )
    .members(sharding::MEMBERS)
    .tensorstore(sharding::TENSORSTORE_MEMBERS),
    Codec::new(
        "vlen-utf8",
        ArrayToBytes,
        Some(|c, spec| vlen::VlenCodec::from_config("vlen-utf8", c, spec).map(s)),
        |c, _| no_members("vlen-utf8", c),
    )
    .always_configured(),
    Codec::new(
        "vlen-bytes",
        ArrayToBytes,
        Some(|c, spec| vlen::VlenCodec::from_config("vlen-bytes", c, spec).map(s)),
        |c, _| no_members("vlen-bytes", c),
    )
    .always_configured(),
    Codec::new(
        "packbits",
        ArrayToBytes,
        Some(|c, spec| packbits::PackbitsCodec::from_config(c, spec).map(s)),
        |c, _| packbits::complete_config(c),
    )
    .nullable(&["first_bit", "last_bit", "start_bit", "end_bit"]),
    Codec::new(
        "gzip",
        BytesToBytes,
        Some(|c, _| gzip::GzipCodec::from_config(c).map(b)),
        |c, _| Ok(gzip::GzipConfig::parse(c)?.members()),
    )
    .members(gzip::MEMBERS)
    .tensorstore(gzip::MEMBERS),
    Codec::new(
        "zstd",
        BytesToBytes,
        Some(|c, _| zstd::ZstdCodec::from_config(c).map(b)),
        |c, _| Ok(zstd::ZstdConfig::parse(c)?.members()),
    )
    .members(zstd::MEMBERS)
    .tensorstore(zstd::MEMBERS),
    Codec::new(
        "blosc",
        BytesToBytes,
        Some(|c, spec| blosc::BloscCodec::from_config(c, spec).map(b)),
        |c, item_size| Ok(blosc::BloscConfig::parse(c, item_size)?.members()),
    )
    .members(blosc::MEMBERS)
    .tensorstore(blosc::TENSORSTORE_MEMBERS),
    Codec::new(
        "crc32c",
        BytesToBytes,
        Some(|c, _| crc32c::Crc32cCodec::from_config(c).map(b)),
        |c, _| no_members("crc32c", c),
    )
    .tensorstore(&[])
    .fixed_size(),
    // numcodecs' filters
    Codec::new(
        "numcodecs.delta",
        ArrayToArray,
        Some(|c, spec| nc::delta::DeltaCodec::from_config(c, spec).map(a)),
        |c, _| nc::delta::complete_config(c),
    )
    .numcodecs(nc::delta::MEMBERS)
    .nullable(&["astype"]),
    Codec::new(
        "numcodecs.astype",
        ArrayToArray,
        Some(|c, spec| nc::astype::AsTypeCodec::from_config(c, spec).map(a)),
        |c, _| nc::astype::complete_config(c),
    )
    .numcodecs(nc::astype::MEMBERS),
    Codec::new(
        "numcodecs.fixedscaleoffset",
        ArrayToArray,
        Some(|c, spec| nc::fixedscaleoffset::FixedScaleOffsetCodec::from_config(c, spec).map(a)),
        |c, _| nc::fixedscaleoffset::complete_config(c),
    )
    .numcodecs(nc::fixedscaleoffset::MEMBERS)
    .nullable(&["astype"]),
    Codec::new(
        "numcodecs.quantize",
        ArrayToArray,
        Some(|c, spec| nc::quantize::QuantizeCodec::from_config(c, spec).map(a)),
        |c, _| nc::quantize::complete_config(c),
    )
    .numcodecs(nc::quantize::MEMBERS)
    .nullable(&["astype"]),
    Codec::new(
        "numcodecs.packbits",
        ArrayToArray,
        Some(|c, spec| nc::packbits::PackBitsCodec::from_config(c, spec).map(a)),
        |c, _| nc::check_config("packbits", c, nc::packbits::MEMBERS).map(|()| vec![]),
    )
    .numcodecs(nc::packbits::MEMBERS),
    Codec::new(
        "numcodecs.bitround",
        ArrayToArray,
        Some(|c, spec| nc::bitround::from_config(c, spec).map(a)),
        |c, _| nc::bitround::complete_config(c),
    )
    .numcodecs(nc::bitround::MEMBERS)
    .members(bitround::MEMBERS),
    // numcodecs' codecs that serialize an array
    Codec::new(
        "numcodecs.pcodec",
        ArrayToBytes,
        Some(|c, spec| nc::pcodec::PcodecCodec::from_config(c, spec).map(s)),
        |c, _| nc::pcodec::complete_config(c),
    )
    .numcodecs(nc::pcodec::MEMBERS)
    .checked_when_encoding(),
    Codec::new(
        "numcodecs.zfpy",
        ArrayToBytes,
        Some(|c, spec| nc::zfpy::ZfpyCodec::from_config(c, spec).map(s)),
        |c, _| nc::zfpy::complete_config(c),
    )
    .numcodecs(nc::zfpy::MEMBERS)
    .checked_when_encoding(),
    // numcodecs' compressors and checksums
    Codec::new(
        "numcodecs.zlib",
        BytesToBytes,
        Some(|c, _| nc::zlib::ZlibCodec::from_config(c).map(b)),
        |c, _| nc::zlib::complete_config(c),
    )
    .numcodecs(nc::zlib::MEMBERS)
    .members(nc::zlib::TYPED_MEMBERS),
    Codec::new(
        "numcodecs.gzip",
        BytesToBytes,
        Some(|c, _| nc::gzip::GzipCodec::from_config(c).map(b)),
        |c, _| nc::gzip::complete_config(c),
    )
    .numcodecs(nc::gzip::MEMBERS)
    .members(nc::gzip::TYPED_MEMBERS),
    Codec::new(
        "numcodecs.bz2",
        BytesToBytes,
        Some(|c, _| nc::bz2::Bz2Codec::from_config(c).map(b)),
        |c, _| nc::bz2::complete_config(c),
    )
    .numcodecs(nc::bz2::MEMBERS)
    .members(nc::bz2::TYPED_MEMBERS),
    Codec::new(
        "numcodecs.lzma",
        BytesToBytes,
        Some(|c, _| nc::lzma::LzmaCodec::from_config(c).map(b)),
        |c, _| nc::lzma::complete_config(c),
    )
    .numcodecs(nc::lzma::MEMBERS)
    .nullable(&["preset", "filters"]),
    Codec::new(
        "numcodecs.zstd",
        BytesToBytes,
        Some(|c, _| nc::zstd::ZstdCodec::from_config(c).map(b)),
        |c, _| nc::zstd::complete_config(c),
    )
    .numcodecs(nc::zstd::MEMBERS)
    .members(nc::zstd::TYPED_MEMBERS),
    Codec::new(
        "numcodecs.lz4",
        BytesToBytes,
        Some(|c, _| nc::lz4::Lz4Codec::from_config(c).map(b)),
        |c, _| nc::lz4::complete_config(c),
    )
    .numcodecs(nc::lz4::MEMBERS)
    .members(nc::lz4::TYPED_MEMBERS),
    Codec::new(
        "numcodecs.blosc",
        BytesToBytes,
        Some(|c, spec| nc::blosc::from_config(c, spec).map(b)),
        |c, _| nc::blosc::complete_config(c),
    )
    .numcodecs(nc::blosc::MEMBERS)
    .members(nc::blosc::TYPED_MEMBERS),
    Codec::new(
        "numcodecs.shuffle",
        BytesToBytes,
        Some(|c, spec| nc::shuffle::ShuffleCodec::from_config(c, spec).map(b)),
        |c, _| nc::shuffle::complete_config(c),
    )
    .numcodecs(nc::shuffle::MEMBERS)
    .members(nc::shuffle::TYPED_MEMBERS),
    Codec::new(
        "numcodecs.crc32",
        BytesToBytes,
        Some(|c, _| nc::checksum32::Checksum32Codec::from_config("crc32", c).map(b)),
        |c, _| nc::checksum32::complete_config("crc32", c),
    )
    .numcodecs(nc::checksum32::MEMBERS)
    .fixed_size(),
    Codec::new(
        "numcodecs.adler32",
        BytesToBytes,
        Some(|c, _| nc::checksum32::Checksum32Codec::from_config("adler32", c).map(b)),
        |c, _| nc::checksum32::complete_config("adler32", c),
    )
    .numcodecs(nc::checksum32::MEMBERS)
    .fixed_size(),
    Codec::new(
        "numcodecs.crc32c",
        BytesToBytes,
        Some(|c, _| nc::checksum32::Checksum32Codec::from_config("crc32c", c).map(b)),
        |c, _| nc::checksum32::complete_config("crc32c", c),
    )
    .numcodecs(nc::checksum32::MEMBERS)
    .fixed_size(),
    Codec::new(
        "numcodecs.base64",
        BytesToBytes,
        Some(|c, _| nc::base64::Base64Codec::from_config(c).map(b)),
        |c, _| nc::check_config("base64", c, nc::base64::MEMBERS).map(|()| vec![]),
    )
    .numcodecs(nc::base64::MEMBERS),
    Codec::new(
        "numcodecs.fletcher32",
        BytesToBytes,
        Some(|c, _| nc::fletcher32::Fletcher32Codec::from_config(c).map(b)),
        |c, _| nc::check_config("fletcher32", c, nc::fletcher32::MEMBERS).map(|()| vec![]),
    )
    .numcodecs(nc::fletcher32::MEMBERS)
    .fixed_size(),
    Codec::new(
        "numcodecs.jenkins_lookup3",
        BytesToBytes,
        Some(|c, _| nc::jenkins::JenkinsLookup3Codec::from_config(c).map(b)),
        |c, _| nc::jenkins::complete_config(c),
    )
    .numcodecs(nc::jenkins::MEMBERS)
    .members(nc::jenkins::TYPED_MEMBERS)
    .nullable(&["prefix"])
    .fixed_size(),
    Codec::new(
        "numcodecs.categorize",
        ArrayToArray,
        Some(|c, spec| nc::categorize::CategorizeCodec::from_config(c, spec).map(a)),
        nc::categorize::complete_config,
    )
    .numcodecs(nc::categorize::MEMBERS),
    // numcodecs' codecs whose defaults are known, not their decoding
    Codec::new(
        "numcodecs.pickle",
        ArrayToBytes,
        None,
        nc::known::complete_pickle,
    )
    .numcodecs(nc::known::PICKLE_MEMBERS),
];

/// The entry of codec `name`.
pub fn lookup(name: &str) -> Option<&'static Codec> {
    CODECS.iter().find(|c| c.name == name)
}

/// The entry of the numcodecs codec with id `id` (its v2 form).
pub fn lookup_numcodecs(id: &str) -> Option<&'static Codec> {
    CODECS
        .iter()
        .find(|c| c.numcodecs_members.is_some() && c.name.strip_prefix("numcodecs.") == Some(id))
}

/// The whole registry as JSON (what `_core.codec_registry` gives Python).
pub fn registry_json() -> Value {
    Value::from(CODECS.iter().map(Codec::to_json).collect::<Vec<_>>())
}

/// What is wrong with the order of a chain of codecs of `kinds`: the one
/// rule of a complete chain (array->array codecs, exactly one array->bytes
/// codec, bytes->bytes codecs), checked by [`super::CodecChain::from_json`]
/// and by the Python metadata layer, each with its own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderProblem {
    /// No array->bytes codec.
    NoArrayToBytes,
    /// More than one array->bytes codec.
    SeveralArrayToBytes,
    /// The array->array codec at this index follows the array->bytes codec.
    ArrayToArrayAfter(usize),
    /// The bytes->bytes codec at this index precedes the array->bytes codec.
    BytesToBytesBefore(usize),
}

impl OrderProblem {
    /// `(problem, index)` for the Python layer (index -1 for the chain as a whole).
    pub fn parts(self) -> (&'static str, i64) {
        match self {
            OrderProblem::NoArrayToBytes => ("no array->bytes", -1),
            OrderProblem::SeveralArrayToBytes => ("several array->bytes", -1),
            OrderProblem::ArrayToArrayAfter(i) => ("array->array after", i as i64),
            OrderProblem::BytesToBytesBefore(i) => ("bytes->bytes before", i as i64),
        }
    }
}

/// The first problem of a chain of codecs of `kinds`, counting its
/// array->bytes codecs first.
pub fn check_order(kinds: &[Kind]) -> Option<OrderProblem> {
    match kinds.iter().filter(|&&k| k == ArrayToBytes).count() {
        0 => return Some(OrderProblem::NoArrayToBytes),
        1 => {}
        _ => return Some(OrderProblem::SeveralArrayToBytes),
    }
    let serializer = kinds.iter().position(|&k| k == ArrayToBytes)?;
    kinds.iter().enumerate().find_map(|(i, &k)| match k {
        ArrayToArray if i > serializer => Some(OrderProblem::ArrayToArrayAfter(i)),
        BytesToBytes if i < serializer => Some(OrderProblem::BytesToBytesBefore(i)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_unique_and_found() {
        for (i, c) in CODECS.iter().enumerate() {
            assert!(
                CODECS[..i].iter().all(|o| o.name != c.name),
                "{} twice",
                c.name
            );
            assert!(std::ptr::eq(lookup(c.name).unwrap(), c));
        }
        assert!(lookup("nope").is_none());
        assert_eq!(lookup_numcodecs("zlib").unwrap().name, "numcodecs.zlib");
        assert!(lookup_numcodecs("vlen-utf8").is_none());
        assert!(lookup_numcodecs("gzip").unwrap().decodes());
        assert!(!lookup_numcodecs("pickle").unwrap().decodes());
    }

    #[test]
    fn every_entry_builds_what_its_kind_says() {
        use crate::codec::tests::spec;
        let configs = [
            ("transpose", json!({"order": [0]})),
            ("scale_offset", json!({"offset": 0, "scale": 1})),
            ("cast_value", json!({"data_type": "int16"})),
            ("bitround", json!({"keepbits": 3, "component_size": 4})),
            ("reshape", json!({"shape": [-1]})),
            (
                "sharding_indexed",
                json!({"chunk_shape": [4], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
              "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}),
            ),
            ("bytes", json!({"endian": "little"})),
            ("numcodecs.delta", json!({"dtype": "<i4"})),
            (
                "numcodecs.astype",
                json!({"encode_dtype": "<i4", "decode_dtype": "<i4"}),
            ),
            (
                "numcodecs.fixedscaleoffset",
                json!({"offset": 0, "scale": 1, "dtype": "<i4"}),
            ),
            ("numcodecs.quantize", json!({"digits": 1, "dtype": "<f4"})),
            ("numcodecs.bitround", json!({"keepbits": 3})),
            // 4-byte elements, as the int32 chunk below
            (
                "numcodecs.categorize",
                json!({"labels": ["a"], "dtype": "<U1"}),
            ),
        ];
        for c in CODECS.iter().filter(|c| c.decodes()) {
            let (dtype, shape) = match c.name {
                "vlen-utf8" => ("string", 8),
                "vlen-bytes" => ("bytes", 8),
                "packbits" | "numcodecs.packbits" => ("bool", 8),
                "numcodecs.quantize" | "numcodecs.bitround" | "numcodecs.zfpy" => ("float32", 8),
                _ => ("int32", 8),
            };
            let config = configs
                .iter()
                .find(|(n, _)| *n == c.name)
                .map_or_else(Map::new, |(_, v)| v.as_object().unwrap().clone());
            let built = c.build(&config, &spec(&[shape], dtype)).unwrap();
            let kind = match built.unwrap_or_else(|e| panic!("{}: {}", c.name, e.message)) {
                AnyCodec::ArrayToArray(_) => ArrayToArray,
                AnyCodec::ArrayToBytes(_) => ArrayToBytes,
                AnyCodec::BytesToBytes(_) => BytesToBytes,
            };
            assert_eq!(kind, c.kind, "{}", c.name);
        }
    }

    #[test]
    fn members_are_the_parsers() {
        // what an entry says of a member is what its codec enforces
        for c in CODECS {
            for m in c.members {
                if let super::super::config::MemberType::Int { min, max } = m.ty {
                    if max < i64::MAX {
                        let mut config = Map::new();
                        for r in c.members.iter().filter(|r| r.required) {
                            config.insert(r.key.into(), json!([1]));
                        }
                        config.insert(m.key.into(), json!(max + 1));
                        assert!(c.complete(&config, 4).is_err(), "{} {}", c.name, m.key);
                        config.insert(m.key.into(), json!(min));
                        assert!(c.complete(&config, 4).is_ok(), "{} {}", c.name, m.key);
                    }
                }
            }
        }
    }

    #[test]
    fn the_order_of_a_chain() {
        use OrderProblem::*;
        let (a, s, b) = (ArrayToArray, ArrayToBytes, BytesToBytes);
        assert_eq!(check_order(&[a, s, b, b]), None);
        assert_eq!(check_order(&[s]), None);
        assert_eq!(check_order(&[]), Some(NoArrayToBytes));
        assert_eq!(check_order(&[a, b]), Some(NoArrayToBytes));
        assert_eq!(check_order(&[b, s, s]), Some(SeveralArrayToBytes));
        assert_eq!(check_order(&[s, a]), Some(ArrayToArrayAfter(1)));
        assert_eq!(check_order(&[a, b, s]), Some(BytesToBytesBefore(1)));
        assert_eq!(ArrayToArrayAfter(3).parts(), ("array->array after", 3));
        assert_eq!(Kind::from_name("bytes->bytes"), Some(BytesToBytes));
        assert_eq!(Kind::from_name("x"), None);
    }

    #[test]
    fn the_json_describes_each_entry() {
        let all = registry_json();
        let gzip = all
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "gzip")
            .unwrap();
        assert_eq!(gzip["kind"], "bytes->bytes");
        assert_eq!(
            gzip["members"],
            json!([{"key": "level", "type": "int", "min": 0, "max": 9, "required": false}])
        );
        assert_eq!(gzip["v2_id"], Value::Null);
        let zlib = lookup("numcodecs.zlib").unwrap().to_json();
        assert_eq!(zlib["v2_id"], "zlib");
        assert_eq!(zlib["numcodecs_members"], json!(["level"]));
        assert_eq!(zlib["always_configured"], true);
        assert_eq!(zlib["tensorstore"], Value::Null);
        assert_eq!(zlib["defaults"], json!([["level", 1]]));
        assert_eq!(
            lookup("scale_offset").unwrap().defaults(),
            json!([["offset", 0], ["scale", 1]])
        );
        assert_eq!(lookup("transpose").unwrap().defaults(), Value::Null);
    }
}

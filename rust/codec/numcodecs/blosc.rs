//! `numcodecs.blosc`: the numcodecs (Zarr v2) configuration of the core blosc
//! codec: `cname`, `clevel`, `shuffle` as an integer (0 none, 1 byte, 2 bit,
//! -1 automatic: bit shuffle for 1-byte items, else byte shuffle),
//! `blocksize`, and `typesize`, which defaults to the item size of the data
//! numcodecs is given (here the element size of the chunk after the filters).

use std::ffi::c_int;

use serde_json::{Map, Value};

use super::check_config;
use crate::codec::bytes_to_bytes::blosc::{BloscCodec, CNAMES};
use crate::codec::bytes_to_bytes::blosc_sys;
use crate::codec::config::{keys, Member, Members};
use crate::codec::ChunkSpec;
use crate::error::Result;

const NAME: &str = "numcodecs.blosc";

/// numcodecs' `Blosc(cname="lz4", clevel=5, shuffle=SHUFFLE, blocksize=AUTOBLOCKS)`
/// (not the v3 `blosc` codec's zstd and data-type-dependent shuffle).
pub const DEFAULT_CNAME: &str = "lz4";
pub const DEFAULT_CLEVEL: i64 = 5;
pub const DEFAULT_SHUFFLE: i64 = 1;
pub const DEFAULT_BLOCKSIZE: i64 = 0;

/// `cname`, `clevel`, `shuffle`, `blocksize` and `typesize` (if given).
struct Parsed<'a> {
    cname: &'a str,
    clevel: i64,
    shuffle: i64,
    blocksize: i64,
    typesize: Option<i64>,
}

/// numcodecs' `get_config()` members of `Blosc`, in its order.
pub const MEMBERS: &[&str] = &["cname", "clevel", "shuffle", "blocksize"];

/// The members with their ranges: `cname` (c-blosc's compressors), `clevel`
/// 0 to 9, `shuffle` -1 (auto) to 2 (bit), `blocksize`, and `typesize`, which
/// numcodecs takes from the data but zarr-python's v3 wrapper writes.
pub const TYPED_MEMBERS: &[Member] = &[
    Member::choice("cname", &CNAMES),
    Member::int("clevel", 0, 9),
    Member::int("shuffle", -1, 2),
    Member::int("blocksize", 0, i32::MAX as i64),
    Member::int("typesize", 1, i32::MAX as i64),
];

fn parse(config: &Map<String, Value>) -> Result<Parsed<'_>> {
    check_config("blosc", config, &keys(TYPED_MEMBERS))?;
    let int = |i: usize| TYPED_MEMBERS[i].get_int(NAME, config);
    // `typesize` is zarrox's: the item size numcodecs takes from the data.
    Ok(Parsed {
        cname: TYPED_MEMBERS[0]
            .get_choice(NAME, config)?
            .unwrap_or(DEFAULT_CNAME),
        clevel: int(1)?.unwrap_or(DEFAULT_CLEVEL),
        shuffle: int(2)?.unwrap_or(DEFAULT_SHUFFLE),
        blocksize: int(3)?.unwrap_or(DEFAULT_BLOCKSIZE),
        typesize: int(4)?,
    })
}

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`
/// (`typesize` only when given: numcodecs takes it from the data it encodes).
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    let p = parse(config)?;
    let mut members: Members = vec![
        ("cname", p.cname.into()),
        ("clevel", p.clevel.into()),
        ("shuffle", p.shuffle.into()),
        ("blocksize", p.blocksize.into()),
    ];
    if let Some(t) = p.typesize {
        members.push(("typesize", t.into()));
    }
    Ok(members)
}

pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<BloscCodec> {
    let Parsed {
        cname,
        clevel,
        shuffle,
        blocksize,
        typesize,
    } = parse(config)?;
    let typesize = typesize.map_or(spec.dtype.size, |t| t as usize);
    let shuffle = match shuffle {
        -1 if typesize == 1 => blosc_sys::BITSHUFFLE,
        -1 => blosc_sys::SHUFFLE,
        s => s as c_int,
    };
    BloscCodec::new(cname, clevel, shuffle, typesize, blocksize as usize)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_robust, build_any, hex};
    use crate::codec::tests::spec;
    use crate::codec::SizeBound::Unbounded;
    use crate::codec::{AnyCodec, BytesToBytesCodec};
    use serde_json::{json, Value};

    fn codec(config: Value, dtype: &str) -> crate::error::Result<Box<dyn BytesToBytesCodec>> {
        match build_any("blosc", config, &spec(&[125], dtype))? {
            AnyCodec::BytesToBytes(c) => Ok(c),
            _ => unreachable!(),
        }
    }

    /// 500 bytes: np.arange(125, dtype='<u4') * 3 (as bytes).
    fn data() -> Vec<u8> {
        (0..125u32).flat_map(|i| (i * 3).to_le_bytes()).collect()
    }

    /// numcodecs.Blosc(cname, clevel, shuffle, blocksize).encode(x).hex() with
    /// x = np.arange(125, dtype='<u4') * 3 (typesize 4 from the array), or of
    /// x.view('u1') (typesize 1) where the dtype is "uint8".
    const REFERENCE: [(&str, &str, &str); 7] = [
        (
            r#"{"cname":"lz4","clevel":5,"shuffle":1}"#,
            "uint32",
            "02013104f4010000f4010000b2000000140000009a000000ff73000306090c0f\
         1215181b1e2124272a2d303336393c3f4245484b4e5154575a5d606366696c6f\
         7275787b7e8184878a8d909396999c9fa2a5a8abaeb1b4b7babdc0c3c6c9cccf\
         d2d5d8dbdee1e4e7eaedf0f3f6f9fcff0205080b0e1114171a1d202326292c2f\
         3235383b3e4144474a4d505356595c5f6265686b6e7174000000000005003e1f\
         010100130f76003c0f020093500000000000",
        ),
        (
            r#"{"cname":"zstd","clevel":3,"shuffle":2}"#,
            "uint32",
            "02019404f4010000f401000023010000140000000b01000028b52ffd60f4000d\
         0800465f3f3800b11b639822fb18aa8aec63a82ab28fa1aac83e86aa22fb18aa\
         8aecf7edb5529927d92353f517648f4cd55f903d32557f41f6c854c52f532b00\
         2f00300059bf7ad5a71ef5a7377de9493f7ad1871ef49ff77ce739bf79cd671e\
         f397b77ce5293f79c9471ef28f777c41fcc33dbcc3397cc3353cc331fcc22dbc\
         c2297cc2253cc221fcc11dbcc1197cc1153cc10fbcc0073cc0bfdef5ad07a7f2\
         509ec92379220fe4793c8edfb88dd7388dcfb88cc7388cbfb88bb7388bafb88a\
         a7388a9fb8899738898fb88887380fc133f0083c010fc0f37a5c4feb613dab47\
         f5a41ed4737a4c4fe9213da347f4841ed0f3793c4fe7e13c9b47f3641ecc7379\
         2c0300",
        ),
        (
            r#"{"cname":"blosclz","clevel":9,"shuffle":0}"#,
            "uint32",
            "02011204f4010000f40100000402000000000000030000000600000009000000\
         0c0000000f0000001200000015000000180000001b0000001e00000021000000\
         24000000270000002a0000002d00000030000000330000003600000039000000\
         3c0000003f0000004200000045000000480000004b0000004e00000051000000\
         54000000570000005a0000005d00000060000000630000006600000069000000\
         6c0000006f0000007200000075000000780000007b0000007e00000081000000\
         84000000870000008a0000008d00000090000000930000009600000099000000\
         9c0000009f000000a2000000a5000000a8000000ab000000ae000000b1000000\
         b4000000b7000000ba000000bd000000c0000000c3000000c6000000c9000000\
         cc000000cf000000d2000000d5000000d8000000db000000de000000e1000000\
         e4000000e7000000ea000000ed000000f0000000f3000000f6000000f9000000\
         fc000000ff0000000201000005010000080100000b0100000e01000011010000\
         14010000170100001a0100001d01000020010000230100002601000029010000\
         2c0100002f0100003201000035010000380100003b0100003e01000041010000\
         44010000470100004a0100004d01000050010000530100005601000059010000\
         5c0100005f0100006201000065010000680100006b0100006e01000071010000\
         74010000",
        ),
        (
            r#"{"cname":"zlib","clevel":1,"shuffle":-1}"#,
            "uint32",
            "02017104f4010000f4010000ad00000014000000950000007801636066e3e4e1\
         1712959096535451d7d2353036b3b4b17772f5f0f60b0c098f8a4d484ecbccc9\
         2f2aada8ae6b6c69efea9d3079dacc39f3172d5db17addc62ddb77ed3d70f8d8\
         c933e72f5dbd71fbdec327cf5fbdfdf0f9dbcf3fff995839b8f90445c4a56415\
         94d53475f48d4c2daced1c5ddcbd7c0382c32263e2935233b2f30a4b18680218\
         890334b17b48180a00f34133fa",
        ),
        (
            r#"{"cname":"lz4hc","clevel":4,"shuffle":1,"blocksize":256}"#,
            "uint32",
            "02013104f401000000010000bf00000018000000680000004c000000ff320003\
         06090c0f1215181b1e2124272a2d303336393c3f4245484b4e5154575a5d6063\
         66696c6f7275787b7e8184878a8d909396999c9fa2a5a8abaeb1b4b7babd0001\
         00a750000000000053000000ff2fc0c3c6c9cccfd2d5d8dbdee1e4e7eaedf0f3\
         f6f9fcff0205080b0e1114171a1d202326292c2f3235383b3e4144474a4d5053\
         56595c5f6265686b6e7174000100021f010100131f00010061500000000000",
        ),
        (
            r#"{"cname":"lz4","clevel":5,"shuffle":-1}"#,
            "uint8",
            "02012601f4010000f40100000402000000000000030000000600000009000000\
         0c0000000f0000001200000015000000180000001b0000001e00000021000000\
         24000000270000002a0000002d00000030000000330000003600000039000000\
         3c0000003f0000004200000045000000480000004b0000004e00000051000000\
         54000000570000005a0000005d00000060000000630000006600000069000000\
         6c0000006f0000007200000075000000780000007b0000007e00000081000000\
         84000000870000008a0000008d00000090000000930000009600000099000000\
         9c0000009f000000a2000000a5000000a8000000ab000000ae000000b1000000\
         b4000000b7000000ba000000bd000000c0000000c3000000c6000000c9000000\
         cc000000cf000000d2000000d5000000d8000000db000000de000000e1000000\
         e4000000e7000000ea000000ed000000f0000000f3000000f6000000f9000000\
         fc000000ff0000000201000005010000080100000b0100000e01000011010000\
         14010000170100001a0100001d01000020010000230100002601000029010000\
         2c0100002f0100003201000035010000380100003b0100003e01000041010000\
         44010000470100004a0100004d01000050010000530100005601000059010000\
         5c0100005f0100006201000065010000680100006b0100006e01000071010000\
         74010000",
        ),
        (
            r#"{"cname":"zstd","clevel":5,"shuffle":1,"typesize":2}"#,
            "uint8",
            "02019102f4010000f4010000e500000014000000cd00000028b52ffd60f4001d\
         0600b2cf2d2900bbddd89249444b26112d9944b46412d19249444bb60900aa49\
         664b6f02806a92d9d29b00209652a6bd4a911a252a14a84f9e3a71daa42913a6\
         4b962a519a242912a4478e1a315aa42811a243860a111a242810a06f5ebc77ed\
         d6a53b576e5cb86fddb665bb566d5ab467cd96253b566c58b05fbd76e5ba556b\
         56ac57ad56a53a556a54a84f9d3665ba34e9d1a24383feecb933e7cd9a3363be\
         6cb932e5c99223437eecb831e3c58a13233e6cb830e1c1820303fe0e02009a43\
         853e450129",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (config, dtype, enc) in REFERENCE {
            let config: Value = serde_json::from_str(config).unwrap();
            let c = codec(config.clone(), dtype).unwrap();
            assert_eq!(c.decode(hex(enc), Unbounded).unwrap(), data(), "{config}");
            assert_eq!(c.encode(data()).unwrap(), hex(enc), "{config} {dtype}");
        }
    }

    #[test]
    fn autoshuffle_and_typesize() {
        // Header byte 2 holds the flags: 0x1 byte shuffle, 0x4 bit shuffle;
        // byte 3 the type size.
        let flags = |config: Value, dtype: &str| {
            let enc = codec(config, dtype).unwrap().encode(data()).unwrap();
            (enc[2] & 0x5, enc[3])
        };
        assert_eq!(flags(json!({"shuffle": -1}), "uint32"), (0x1, 4));
        assert_eq!(flags(json!({"shuffle": -1}), "uint8"), (0x4, 1));
        assert_eq!(
            flags(json!({"shuffle": -1, "typesize": 2}), "uint8"),
            (0x1, 2)
        );
        assert_eq!(flags(json!({}), "uint32"), (0x1, 4));
        assert_eq!(flags(json!({"shuffle": 2}), "uint32"), (0x4, 4));
        assert_eq!(
            flags(json!({"shuffle": 0, "typesize": null}), "uint32"),
            (0, 4)
        );
    }

    #[test]
    fn config_and_corrupt_input() {
        assert!(codec(json!({"cname": "snappy"}), "uint8").is_err());
        assert!(codec(json!({"clevel": 10}), "uint8").is_err());
        assert!(codec(json!({"shuffle": 3}), "uint8").is_err());
        assert!(codec(json!({"shuffle": "shuffle"}), "uint8").is_err());
        assert!(codec(json!({"typesize": 0}), "uint8").is_err());
        assert!(codec(json!({"blocksize": -1}), "uint8").is_err());
        let c = codec(
            json!({"cname": "zstd", "clevel": 3, "shuffle": 1}),
            "uint32",
        )
        .unwrap();
        let enc = c.encode(data()).unwrap();
        assert_robust(c.as_ref(), &enc, true);
    }
}

//! `numcodecs.lzma`: Python's `lzma.compress(buf, format, check, preset,
//! filters)` / `lzma.decompress(buf, format, filters=...)` via liblzma (built
//! from source by liblzma-sys).
//!
//! `format`: 1 `.xz` (default), 2 `.lzma` ("alone"), 3 raw (needs `filters`),
//! 0 auto (decoding only, as in Python). `check` (xz only): -1 default
//! (CRC64), 0 none, 1 CRC32, 4 CRC64, 10 SHA-256. `preset`: 0-9, optionally
//! `| 0x80000000` (extreme); default 6. `filters`: Python's list of filter
//! dicts (`{"id": 33, "preset": 6, "dict_size": ...}`; LZMA1/LZMA2 with
//! `preset dict_size lc lp pb mode nice_len mf depth`, delta with `dist`, the
//! BCJ filters with `start_offset`), exclusive with `preset`.
//!
//! Unlike numcodecs, decoding `.xz` data ignores `filters` (the stream header
//! records them; Python refuses filters there, so numcodecs cannot decode its
//! own `.xz` output written with custom filters).

use liblzma::stream::{Action, Check, Filters, LzmaOptions, MatchFinder, Mode, Status, Stream};
use serde_json::{Map, Value};

use super::check_config;
use crate::codec::config::{int_member, Members};
use crate::codec::{make_room, with_slack, BytesToBytesCodec, SizeBound};
use crate::error::{Error, Result};

const NAME: &str = "numcodecs.lzma";

const FORMAT_AUTO: i64 = 0;
const FORMAT_XZ: i64 = 1;
const FORMAT_ALONE: i64 = 2;
const FORMAT_RAW: i64 = 3;

const FILTER_LZMA1: u64 = 0x4000_0000_0000_0001;
const FILTER_LZMA2: u64 = 0x21;
const FILTER_DELTA: u64 = 0x03;
/// x86, PowerPC, IA-64, ARM, ARM-Thumb, SPARC.
const BCJ_FILTERS: [u64; 6] = [0x04, 0x05, 0x06, 0x07, 0x08, 0x09];

const PRESET_DEFAULT: u32 = 6;
const PRESET_EXTREME: u32 = 0x8000_0000;

/// One entry of a filter chain, as parsed from Python's filter dict.
#[derive(Debug, Clone)]
enum FilterSpec {
    Lzma {
        lzma1: bool,
        preset: u32,
        /// dict_size, lc, lp, pb, mode, nice_len, mf, depth overrides.
        dict_size: Option<u32>,
        lc: Option<u32>,
        lp: Option<u32>,
        pb: Option<u32>,
        mode: Option<Mode>,
        nice_len: Option<u32>,
        mf: Option<MatchFinder>,
        depth: Option<u32>,
    },
    Delta {
        dist: u32,
    },
    Bcj {
        id: u64,
        start_offset: u32,
    },
}

#[derive(Debug)]
pub struct LzmaCodec {
    format: i64,
    check: i64,
    preset: Option<u32>,
    filters: Option<Vec<FilterSpec>>,
}

fn preset_value(v: &Value, what: &str) -> Result<u32> {
    let p = v
        .as_u64()
        .filter(|&p| p <= u64::from(u32::MAX))
        .ok_or_else(|| {
            Error::metadata(format!(
                "codec '{NAME}': {what} must be an integer, got {v}"
            ))
        })? as u32;
    if p & !PRESET_EXTREME > 9 {
        return Err(Error::metadata(format!(
            "codec '{NAME}': invalid compression preset {p}"
        )));
    }
    Ok(p)
}

fn parse_filter(v: &Value) -> Result<FilterSpec> {
    let obj = v.as_object().ok_or_else(|| {
        Error::metadata(format!(
            "codec '{NAME}': a filter specifier must be a dict, got {v}"
        ))
    })?;
    let id = obj.get("id").and_then(Value::as_u64).ok_or_else(|| {
        Error::metadata(format!(
            "codec '{NAME}': a filter specifier must have an integer 'id', got {v}"
        ))
    })?;
    let u32_opt = |key: &str| -> Result<Option<u32>> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => x
                .as_u64()
                .filter(|&n| n <= u64::from(u32::MAX))
                .map(|n| Some(n as u32))
                .ok_or_else(|| {
                    Error::metadata(format!(
                        "codec '{NAME}': filter option '{key}' must be an unsigned 32-bit integer, got {x}"
                    ))
                }),
        }
    };
    let only = |allowed: &[&str]| -> Result<()> {
        for key in obj.keys() {
            if key != "id" && !allowed.contains(&key.as_str()) {
                return Err(Error::metadata(format!(
                    "codec '{NAME}': invalid option '{key}' for filter {id:#x}"
                )));
            }
        }
        Ok(())
    };
    if id == FILTER_LZMA1 || id == FILTER_LZMA2 {
        only(&[
            "preset",
            "dict_size",
            "lc",
            "lp",
            "pb",
            "mode",
            "nice_len",
            "mf",
            "depth",
        ])?;
        let preset = match obj.get("preset") {
            None | Some(Value::Null) => PRESET_DEFAULT,
            Some(p) => preset_value(p, "filter 'preset'")?,
        };
        let mode = match u32_opt("mode")? {
            None => None,
            Some(1) => Some(Mode::Fast),
            Some(2) => Some(Mode::Normal),
            Some(m) => {
                return Err(Error::metadata(format!(
                    "codec '{NAME}': invalid filter mode {m}"
                )))
            }
        };
        let mf = match u32_opt("mf")? {
            None => None,
            Some(0x03) => Some(MatchFinder::HashChain3),
            Some(0x04) => Some(MatchFinder::HashChain4),
            Some(0x12) => Some(MatchFinder::BinaryTree2),
            Some(0x13) => Some(MatchFinder::BinaryTree3),
            Some(0x14) => Some(MatchFinder::BinaryTree4),
            Some(m) => {
                return Err(Error::metadata(format!(
                    "codec '{NAME}': invalid match finder {m}"
                )))
            }
        };
        let (lc, lp, pb) = (u32_opt("lc")?, u32_opt("lp")?, u32_opt("pb")?);
        // liblzma's limits (Python reports "Invalid or unsupported options").
        // Unset values come from the preset, which always has lc 3, lp 0, pb 2.
        let (lc_v, lp_v) = (lc.unwrap_or(3), lp.unwrap_or(0));
        if lc_v > 4 || lp_v > 4 || lc_v + lp_v > 4 || pb.unwrap_or(2) > 4 {
            return Err(Error::metadata(format!(
                "codec '{NAME}': invalid LZMA options: lc and lp must be at most 4 together, \
                 pb at most 4"
            )));
        }
        Ok(FilterSpec::Lzma {
            lzma1: id == FILTER_LZMA1,
            preset,
            dict_size: u32_opt("dict_size")?,
            lc,
            lp,
            pb,
            mode,
            nice_len: u32_opt("nice_len")?,
            mf,
            depth: u32_opt("depth")?,
        })
    } else if id == FILTER_DELTA {
        only(&["dist"])?;
        let dist = u32_opt("dist")?.unwrap_or(1);
        if !(1..=256).contains(&dist) {
            return Err(Error::metadata(format!(
                "codec '{NAME}': delta filter 'dist' must be in [1, 256], got {dist}"
            )));
        }
        Ok(FilterSpec::Delta { dist })
    } else if BCJ_FILTERS.contains(&id) {
        only(&["start_offset"])?;
        Ok(FilterSpec::Bcj {
            id,
            start_offset: u32_opt("start_offset")?.unwrap_or(0),
        })
    } else {
        Err(Error::metadata(format!(
            "codec '{NAME}': invalid filter id {id:#x}"
        )))
    }
}

fn lzma_error(e: liblzma::stream::Error) -> Error {
    Error::value(format!("lzma: {e:?}"))
}

/// liblzma options of an LZMA1/LZMA2 filter spec.
fn lzma_options(spec: &FilterSpec) -> Result<LzmaOptions> {
    let FilterSpec::Lzma {
        preset,
        dict_size,
        lc,
        lp,
        pb,
        mode,
        nice_len,
        mf,
        depth,
        ..
    } = spec
    else {
        return Err(Error::metadata(format!(
            "codec '{NAME}': not an LZMA filter"
        )));
    };
    let mut o = LzmaOptions::new_preset(*preset).map_err(lzma_error)?;
    if let Some(v) = dict_size {
        o.dict_size(*v);
    }
    if let Some(v) = lc {
        o.literal_context_bits(*v);
    }
    if let Some(v) = lp {
        o.literal_position_bits(*v);
    }
    if let Some(v) = pb {
        o.position_bits(*v);
    }
    if let Some(v) = mode {
        o.mode(*v);
    }
    if let Some(v) = nice_len {
        o.nice_len(*v);
    }
    if let Some(v) = mf {
        o.match_finder(*v);
    }
    if let Some(v) = depth {
        o.depth(*v);
    }
    Ok(o)
}

/// A liblzma filter chain from the parsed specs (built per call: `Filters`
/// holds raw pointers and is not `Send`).
fn build_filters(specs: &[FilterSpec]) -> Result<Filters> {
    let mut f = Filters::new();
    for spec in specs {
        match spec {
            FilterSpec::Lzma { lzma1, .. } => {
                let o = lzma_options(spec)?;
                if *lzma1 {
                    f.lzma1(&o);
                } else {
                    f.lzma2(&o);
                }
            }
            FilterSpec::Delta { dist } => {
                f.delta_properties(&[(*dist - 1) as u8])
                    .map_err(lzma_error)?;
            }
            FilterSpec::Bcj { id, start_offset } => {
                let props = start_offset.to_le_bytes();
                let props: &[u8] = if *start_offset == 0 { &[] } else { &props };
                let r = match id {
                    0x04 => f.x86_properties(props),
                    0x05 => f.powerpc_properties(props),
                    0x06 => f.ia64_properties(props),
                    0x07 => f.arm_properties(props),
                    0x08 => f.arm_thumb_properties(props),
                    _ => f.sparc_properties(props),
                };
                r.map_err(lzma_error)?;
            }
        }
    }
    Ok(f)
}

/// numcodecs' `LZMA(format=1, check=-1, preset=None, filters=None)` members,
/// in its order.
pub const MEMBERS: &[&str] = &["format", "check", "preset", "filters"];

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`
/// (`preset` and `filters` as given).
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    let codec = LzmaCodec::from_config(config)?;
    let given = |key: &str| config.get(key).cloned().unwrap_or(Value::Null);
    Ok(vec![
        ("format", codec.format.into()),
        ("check", codec.check.into()),
        ("preset", given("preset")),
        ("filters", given("filters")),
    ])
}

impl LzmaCodec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        check_config("lzma", config, MEMBERS)?;
        let format = int_member(NAME, config, "format", 0, 3)?.unwrap_or(FORMAT_XZ);
        let check = int_member(NAME, config, "check", -1, 15)?.unwrap_or(-1);
        if ![-1, 0, 1, 4, 10].contains(&check) {
            return Err(Error::metadata(format!(
                "codec '{NAME}': unsupported integrity check {check}"
            )));
        }
        if format != FORMAT_XZ && check != -1 && check != 0 {
            return Err(Error::metadata(format!(
                "codec '{NAME}': integrity checks are only supported by FORMAT_XZ"
            )));
        }
        let preset = match config.get("preset") {
            None | Some(Value::Null) => None,
            Some(p) => Some(preset_value(p, "'preset'")?),
        };
        let filters = match config.get("filters") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) => {
                Some(items.iter().map(parse_filter).collect::<Result<Vec<_>>>()?)
            }
            Some(v) => {
                return Err(Error::metadata(format!(
                    "codec '{NAME}': 'filters' must be a list, got {v}"
                )))
            }
        };
        if let Some(specs) = &filters {
            if preset.is_some() {
                return Err(Error::metadata(format!(
                    "codec '{NAME}': cannot specify both preset and filter chain"
                )));
            }
            let lzma_at = specs
                .iter()
                .position(|s| matches!(s, FilterSpec::Lzma { .. }));
            if specs.is_empty() || specs.len() > 4 || lzma_at != Some(specs.len() - 1) {
                return Err(Error::metadata(format!(
                    "codec '{NAME}': a filter chain must be 1 to 4 filters ending with \
                     its only LZMA1 or LZMA2 filter"
                )));
            }
            if format == FORMAT_ALONE
                && !(specs.len() == 1 && matches!(specs[0], FilterSpec::Lzma { lzma1: true, .. }))
            {
                return Err(Error::metadata(format!(
                    "codec '{NAME}': the filter chain for FORMAT_ALONE must be a single \
                     LZMA1 filter"
                )));
            }
        } else if format == FORMAT_RAW {
            return Err(Error::metadata(format!(
                "codec '{NAME}': FORMAT_RAW requires 'filters'"
            )));
        }
        Ok(LzmaCodec {
            format,
            check,
            preset,
            filters,
        })
    }

    fn encoder(&self) -> Result<Stream> {
        let preset = self.preset.unwrap_or(PRESET_DEFAULT);
        match (self.format, &self.filters) {
            (FORMAT_XZ, None) => Stream::new_easy_encoder(preset, self.xz_check()),
            (FORMAT_XZ, Some(specs)) => {
                Stream::new_stream_encoder(&build_filters(specs)?, self.xz_check())
            }
            (FORMAT_ALONE, None) => {
                Stream::new_lzma_encoder(&LzmaOptions::new_preset(preset).map_err(lzma_error)?)
            }
            (FORMAT_ALONE, Some(specs)) => Stream::new_lzma_encoder(&lzma_options(&specs[0])?),
            (FORMAT_RAW, Some(specs)) => Stream::new_raw_encoder(&build_filters(specs)?),
            _ => {
                return Err(Error::value(
                    "lzma: FORMAT_AUTO can only decode; choose a format to encode",
                ))
            }
        }
        .map_err(lzma_error)
    }

    fn xz_check(&self) -> Check {
        match self.check {
            0 => Check::None,
            1 => Check::Crc32,
            10 => Check::Sha256,
            _ => Check::Crc64,
        }
    }

    /// A decoder whose memory (mostly the dictionary the stream header
    /// declares, allocated up front) stays within [`memlimit`] of `bound`.
    fn decoder(&self, bound: SizeBound) -> Result<Stream> {
        let limit = memlimit(bound);
        match self.format {
            FORMAT_AUTO => Stream::new_auto_decoder(limit, 0),
            FORMAT_XZ => Stream::new_stream_decoder(limit, 0),
            FORMAT_ALONE => Stream::new_lzma_decoder(limit),
            _ => {
                let specs = self.filters.as_deref().unwrap_or_default();
                Stream::new_raw_decoder(&build_filters(specs)?)
            }
        }
        .map_err(|e| Error::corrupt(format!("lzma: {e:?}")))
    }
}

/// The largest dictionary of the presets (preset 9: 64 MiB). Encoders declare
/// their preset's dictionary whatever the size of the data (Python's
/// `lzma.compress` does), so decoders must accept it even for small chunks.
const PRESET_DICT_MAX: u64 = 64 << 20;

/// Memory a decoder may use for a chunk within `bound`: a dictionary as large
/// as the chunk (decoding never needs more) or the presets' largest, whichever
/// is larger, and liblzma's bookkeeping. A stream header declaring a larger
/// dictionary (up to 1.5 GiB) is refused before liblzma allocates it. For
/// variable-length chunks (no bound) there is no limit.
fn memlimit(bound: SizeBound) -> u64 {
    match bound {
        SizeBound::Unbounded => u64::MAX,
        b => (b.limit() as u64)
            .max(PRESET_DICT_MAX)
            .saturating_add(16 << 20),
    }
}

enum StreamError {
    Data(String),
    Truncated,
}

/// Decode one stream from the start of `input`, appending to `out` within
/// `bound` (an error, not a stream error, when it would go past it); returns
/// the number of input bytes taken.
fn decode_stream(
    mut stream: Stream,
    input: &[u8],
    out: &mut Vec<u8>,
    bound: SizeBound,
) -> Result<std::result::Result<usize, StreamError>> {
    loop {
        make_room(out, bound, "lzma")?;
        let (ti, to) = (stream.total_in() as usize, stream.total_out() as usize);
        let status = match stream.process_vec(&input[ti..], out, Action::Run) {
            Ok(status) => status,
            Err(liblzma::stream::Error::MemLimit) => {
                return Err(Error::corrupt(format!(
                    "lzma: the stream declares a dictionary larger than the {} bytes a chunk \
                     of at most {} bytes may use",
                    memlimit(bound),
                    bound.limit()
                )))
            }
            Err(e) => return Ok(Err(StreamError::Data(format!("{e:?}")))),
        };
        if status == Status::StreamEnd {
            return Ok(Ok(stream.total_in() as usize));
        }
        if stream.total_in() as usize == ti && stream.total_out() as usize == to {
            return Ok(Err(StreamError::Truncated));
        }
    }
}

impl BytesToBytesCodec for LzmaCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        let mut stream = self.encoder()?;
        let mut out = crate::alloc::with_capacity(decoded.len() / 2 + 128)?;
        loop {
            if out.len() == out.capacity() {
                let more = out.capacity().max(4096);
                crate::alloc::reserve(&mut out, more)?;
            }
            let ti = stream.total_in() as usize;
            let action = if ti == decoded.len() {
                Action::Finish
            } else {
                Action::Run
            };
            let status = stream
                .process_vec(&decoded[ti..], &mut out, action)
                .map_err(lzma_error)?;
            if status == Status::StreamEnd {
                return Ok(out);
            }
        }
    }

    /// As `lzma.decompress`: concatenated streams, and data after them that
    /// is not a stream ignored.
    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut rest = encoded.as_slice();
        let mut first = true;
        loop {
            let before = out.len();
            match decode_stream(self.decoder(bound)?, rest, &mut out, bound)? {
                Ok(used) => rest = &rest[used.min(rest.len())..],
                Err(StreamError::Data(_)) if !first => {
                    out.truncate(before);
                    break;
                }
                Err(StreamError::Data(e)) => {
                    return Err(Error::corrupt(format!("lzma: invalid data ({e})")))
                }
                Err(StreamError::Truncated) => {
                    return Err(Error::corrupt(
                        "lzma: compressed data ended before the end-of-stream marker",
                    ))
                }
            }
            first = false;
            if rest.is_empty() {
                break;
            }
        }
        bound.check("lzma", out.len())?;
        Ok(out)
    }

    /// liblzma's worst case (incompressible data in stored LZMA2 chunks of at
    /// most 64 KiB, 3 bytes each; LZMA1 expands it by at most about 1.5%), and
    /// the container's headers, index and footer, generously.
    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        decoded.compressed(|n| with_slack(n.checked_add((n >> 5) + 4096)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_robust, bytes_codec, compressor_input, hex};
    use crate::codec::tests::sample;
    use crate::codec::SizeBound::Unbounded;
    use serde_json::{json, Value};

    /// (config, numcodecs.LZMA(**config).encode(d).hex())
    const REFERENCE: [(&str, &str); 13] = [
        (
            r#"{}"#,
            "fd377a585a000004e6d6b4460200210116000000742fe5a3e001f300f55d0000\
         020f570268c678ced80f90e6ebb6dd1f7062b0212714f9b1958a5860217a2cac\
         e77798df4586b188dff8f7052dd535f17afa80adbbe5d1b2bac38aaae411317b\
         e16bce4effa1382bb99b2ac67070a5632c9ff0100ebe8d03d60cbe64bbafc845\
         04539731b9b5acedec163b7930bc22c654cfe95e3049059dcb5dbf0b2472499b\
         7a8188934d9f69433f0fe5d535fa9631b362d62d487ae32820b916ac4687d07e\
         a5e6405c4bc8eae4e6e92e13a3152a6c471c365857f60397c804653ced87bba3\
         5ee5cb2900631fa57181f7b3e3ae272c298de2cdcc2b42eb7bc7ff3a1ad0a893\
         e5d7c2f4e72ed04cc98a90e033a613549f544000000000000ee4703d1c41046e\
         00019102f4030000f27ded64b1c467fb020000000004595a",
        ),
        (
            r#"{"preset":1}"#,
            "fd377a585a000004e6d6b4460200210110000000a8708e86e001f300f55d0000\
         020f570268c678ced80f90e6ebb6dd1f7062b0212714f9b1958a5860217a2cac\
         e77798df4586b188dff8f7052dd535f17afa80adbbe5d1b2bac38aaae411317b\
         e16bce4effa1382bb99b2ac67070a5632c9ff0100ebe8d03d60cbe64bbafc845\
         04539731b9b5acedec163b7930bc22c654cfe95e3049059dcb5dbf0b2472499b\
         7a8188934d9f69433f0fe5d535fa9631b362d62d487ae32820b916ac4687d07e\
         a5e6405c4bc8eae4e6e92e13a3152a6c471c365857f60397c804653ced87bba3\
         5ee5cb2900631fa57181f7b3e3ae272c298de2cdcc2b42eb7bc7ff3a1ad0a893\
         e5d7c2f4e72ed04cc98a90e033a613549f544000000000000ee4703d1c41046e\
         00019102f4030000f27ded64b1c467fb020000000004595a",
        ),
        (
            r#"{"format":2}"#,
            "5d00008000ffffffffffffffff0000020f570268c678ced80f90e6ebb6dd1f70\
         62b0212714f9b1958a5860217a2cace77798df4586b188dff8f7052dd535f17a\
         fa80adbbe5d1b2bac38aaae411317be16bce4effa1382bb99b2ac67070a5632c\
         9ff0100ebe8d03d60cbe64bbafc84504539731b9b5acedec163b7930bc22c654\
         cfe95e3049059dcb5dbf0b2472499b7a8188934d9f69433f0fe5d535fa9631b3\
         62d62d487ae32820b916ac4687d07ea5e6405c4bc8eae4e6e92e13a3152a6c47\
         1c365857f60397c804653ced87bba35ee5cb2900631fa57181f7b3e3ae272c29\
         8de2cdcc2b42eb7bc7ff3a1ad0a893e5d7c2f4e72ed04cc98a90e033a61354a1\
         fde797fffec98400",
        ),
        (
            r#"{"format":2,"preset":0}"#,
            "5d00000400ffffffffffffffff0000020f570268c678ced80f90e6ebb6dd1f70\
         62b0212714f9b1958a5860217a2cace77798df4586b188dff8f7052dd535f17a\
         fa80adbbe5d1b2bac38aaae411317be16bce4effa1382bb99b2ac67070a5632c\
         9ff0100ebe8d03d60cbe64bbafc84504539731b9b5acedec163b7930bc22c654\
         cfe95e3049059dcb5dbf0b2472499b7a8188934d9f69433f0fe5d535fa9631b3\
         62d62d487ae32820b916ac4687d07ea5e6405c4bc8eae4e6e92e13a3152a6c47\
         1c365857f60397c804653ced87bba35ee5cb2900631fa57181f7b3e3ae272c29\
         8de2cdcc2b42eb7bc7ff3a1ad0a893e5d7c2f4e72ed04cc98a90e033a61354a1\
         fde797fffec98400",
        ),
        (
            r#"{"check":0}"#,
            "fd377a585a000000ff12d9410200210116000000742fe5a3e001f300f55d0000\
         020f570268c678ced80f90e6ebb6dd1f7062b0212714f9b1958a5860217a2cac\
         e77798df4586b188dff8f7052dd535f17afa80adbbe5d1b2bac38aaae411317b\
         e16bce4effa1382bb99b2ac67070a5632c9ff0100ebe8d03d60cbe64bbafc845\
         04539731b9b5acedec163b7930bc22c654cfe95e3049059dcb5dbf0b2472499b\
         7a8188934d9f69433f0fe5d535fa9631b362d62d487ae32820b916ac4687d07e\
         a5e6405c4bc8eae4e6e92e13a3152a6c471c365857f60397c804653ced87bba3\
         5ee5cb2900631fa57181f7b3e3ae272c298de2cdcc2b42eb7bc7ff3a1ad0a893\
         e5d7c2f4e72ed04cc98a90e033a613549f5440000000000000018902f4030000\
         04fd688ba8000afc020000000000595a",
        ),
        (
            r#"{"check":10,"preset":2}"#,
            "fd377a585a00000ae1fb0ca1020021011200000023b8872ce001f300f55d0000\
         020f570268c678ced80f90e6ebb6dd1f7062b0212714f9b1958a5860217a2cac\
         e77798df4586b188dff8f7052dd535f17afa80adbbe5d1b2bac38aaae411317b\
         e16bce4effa1382bb99b2ac67070a5632c9ff0100ebe8d03d60cbe64bbafc845\
         04539731b9b5acedec163b7930bc22c654cfe95e3049059dcb5dbf0b2472499b\
         7a8188934d9f69433f0fe5d535fa9631b362d62d487ae32820b916ac4687d07e\
         a5e6405c4bc8eae4e6e92e13a3152a6c471c365857f60397c804653ced87bba3\
         5ee5cb2900631fa57181f7b3e3ae272c298de2cdcc2b42eb7bc7ff3a1ad0a893\
         e5d7c2f4e72ed04cc98a90e033a613549f54400000000000da1d1934be9ec58f\
         8e144c241e13bd2b7fbe8298ef6151552e704e49da3a86e40001a902f4030000\
         32f8c48cb6e9df1c02000000000a595a",
        ),
        (
            r#"{"check":1,"preset":2147483657}"#,
            "fd377a585a0000016922de36020021011c00000010cf58cce001f300f55d0000\
         020f570268c678ced80f90e6ebb6dd1f7062b0212714f9b1958a5860217a2cac\
         e77798df4586b188dff8f7052dd535f17afa80adbbe5d1b2bac38aaae411317b\
         e16bce4effa1382bb99b2ac67070a5632c9ff0100ebe8d03d60cbe64bbafc845\
         04539731b9b5acedec163b7930bc22c654cfe95e3049059dcb5dbf0b2472499b\
         7a8188934d9f69433f0fe5d535fa9631b362d62d487ae32820b916ac4687d07e\
         a5e6405c4bc8eae4e6e92e13a3152a6c471c365857f60397c804653ced87bba3\
         5ee5cb2900631fa57181f7b3e3ae272c298de2cdcc2b42eb7bc7ff3a1ad0a893\
         e5d7c2f4e72ed04cc98a90e033a613549f54400000000000b44dbab000018d02\
         f403000012bff9103e300d8b020000000001595a",
        ),
        (
            r#"{"format":3,"filters":[{"id":33,"preset":1}]}"#,
            "e001f300f55d0000020f570268c678ced80f90e6ebb6dd1f7062b0212714f9b1\
         958a5860217a2cace77798df4586b188dff8f7052dd535f17afa80adbbe5d1b2\
         bac38aaae411317be16bce4effa1382bb99b2ac67070a5632c9ff0100ebe8d03\
         d60cbe64bbafc84504539731b9b5acedec163b7930bc22c654cfe95e3049059d\
         cb5dbf0b2472499b7a8188934d9f69433f0fe5d535fa9631b362d62d487ae328\
         20b916ac4687d07ea5e6405c4bc8eae4e6e92e13a3152a6c471c365857f60397\
         c804653ced87bba35ee5cb2900631fa57181f7b3e3ae272c298de2cdcc2b42eb\
         7bc7ff3a1ad0a893e5d7c2f4e72ed04cc98a90e033a613549f54400000",
        ),
        (
            r#"{"format":3,"filters":[{"id":4611686018427387905,"preset":1}]}"#,
            "0000020f570268c678ced80f90e6ebb6dd1f7062b0212714f9b1958a5860217a\
         2cace77798df4586b188dff8f7052dd535f17afa80adbbe5d1b2bac38aaae411\
         317be16bce4effa1382bb99b2ac67070a5632c9ff0100ebe8d03d60cbe64bbaf\
         c84504539731b9b5acedec163b7930bc22c654cfe95e3049059dcb5dbf0b2472\
         499b7a8188934d9f69433f0fe5d535fa9631b362d62d487ae32820b916ac4687\
         d07ea5e6405c4bc8eae4e6e92e13a3152a6c471c365857f60397c804653ced87\
         bba35ee5cb2900631fa57181f7b3e3ae272c298de2cdcc2b42eb7bc7ff3a1ad0\
         a893e5d7c2f4e72ed04cc98a90e033a61354a1fde797fffec98400",
        ),
        (
            r#"{"format":3,"filters":[{"id":3,"dist":4},{"id":33,"preset":1,"dict_size":65536,"lc":2,"lp":1,"pb":1,"mode":1,"nice_len":32,"mf":4,"depth":8}]}"#,
            "e001f3001e38000001c207820ace7cf30c90421000d64bfa780d41f0f3098344\
         d825946e0000",
        ),
        (
            r#"{"filters":[{"id":3,"dist":2},{"id":33,"preset":1}]}"#,
            "fd377a585a000004e6d6b446020103010121011029e21bbfe001f300185d0000\
         020f79aaabcddb619f857f4ba4d591b7c9d5ac0d53cf00000ee4703d1c41046e\
         000134f40300000015c8bff3b1c467fb020000000004595a",
        ),
        (
            r#"{"format":2,"filters":[{"id":4611686018427387905,"preset":3,"lc":2,"mf":18}]}"#,
            "5c00004000ffffffffffffffff0000020f570268c6dc0dd42ecb5eb2a5445522\
         831a613a6ca41ca69198270a57bd80acfd565c5b96025ff17d8552c04f86e018\
         4c5f46592e5c2e15ef17d8c372e5ff38e87ff3cd99939145359dd0fb8e46adf7\
         458b41f30b3c513b14487c75e16f7ebeca7832f1c37985879240241355d7aaeb\
         578e8ff220031e9c4223a3f74621354b05bae93e156e3389fae4854783785030\
         1cca01e8393ec2f3d446d80697fc02063d603593d4002563cf01cadf5d72dd74\
         3f6d57b31a1529252808d774de750219e330f4c7c5a26cbe3623a249fc47936c\
         1778821b257db69c01a2d9c71a74e5f693ebb82fa0b47833f68e6126c26c541f\
         702823ffffdba83000",
        ),
        (
            r#"{"format":1,"filters":[{"id":4},{"id":33,"preset":0}]}"#,
            "fd377a585a000004e6d6b4460201040021010c00d67c18afe001f300f55d0000\
         020f570268c678ced80f90e6ebb6dd1f7062b0212714f9b1958a5860217a2cac\
         e77798df4586b188dff8f7052dd535f17afa80adbbe5d1b2bac38aaae411317b\
         e16bce4effa1382bb99b2ac67070a5632c9ff0100ebe8d03d60cbe64bbafc845\
         04539731b9b5acedec163b7930bc22c654cfe95e3049059dcb5dbf0b2472499b\
         7a8188934d9f69433f0fe5d535fa9631b362d62d487ae32820b916ac4687d07e\
         a5e6405c4bc8eae4e6e92e13a3152a6c471c365857f60397c804653ced87bba3\
         5ee5cb2900631fa57181f7b3e3ae272c298de2cdcc2b42eb7bc7ff3a1ad0a893\
         e5d7c2f4e72ed04cc98a90e033a613549f544000000000000ee4703d1c41046e\
         00019102f4030000f27ded64b1c467fb020000000004595a",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (config, enc) in REFERENCE {
            let config: Value = serde_json::from_str(config).unwrap();
            let c = bytes_codec("lzma", config.clone()).unwrap();
            assert_eq!(
                c.decode(hex(enc), Unbounded).unwrap(),
                compressor_input(),
                "{config}"
            );
            assert_eq!(c.encode(compressor_input()).unwrap(), hex(enc), "{config}");
        }
    }

    #[test]
    fn auto_format_decodes_xz_and_alone() {
        let auto = bytes_codec("lzma", json!({"format": 0})).unwrap();
        for format in [1, 2] {
            let c = bytes_codec("lzma", json!({ "format": format })).unwrap();
            assert_eq!(
                auto.decode(c.encode(compressor_input()).unwrap(), Unbounded)
                    .unwrap(),
                compressor_input()
            );
        }
        assert!(auto.encode(compressor_input()).is_err());
    }

    #[test]
    fn concatenated_streams_and_trailing_garbage() {
        let c = bytes_codec("lzma", json!({"preset": 1})).unwrap();
        let mut enc = c.encode(compressor_input()).unwrap();
        enc.extend(c.encode(sample(9)).unwrap());
        let mut expected = compressor_input();
        expected.extend(sample(9));
        assert_eq!(c.decode(enc.clone(), Unbounded).unwrap(), expected);
        // Data after the streams that is not a stream is ignored...
        let mut garbage = enc.clone();
        garbage.extend_from_slice(b"not an xz stream");
        assert_eq!(c.decode(garbage, Unbounded).unwrap(), expected);
        // ... but an incomplete one is an error, as in Python.
        enc.extend_from_slice(&[0; 8]);
        assert!(c.decode(enc, Unbounded).is_err());
    }

    #[test]
    fn config_validation() {
        let err = |v: Value| bytes_codec("lzma", v).unwrap_err().message;
        assert!(err(json!({"format": 3})).contains("requires 'filters'"));
        assert!(err(json!({"format": 4})).contains("format"));
        assert!(err(json!({"check": 2})).contains("check"));
        assert!(err(json!({"format": 2, "check": 4})).contains("FORMAT_XZ"));
        assert!(err(json!({"preset": 10})).contains("preset"));
        assert!(err(json!({"preset": 1, "filters": [{"id": 33}]})).contains("both"));
        assert!(err(json!({"filters": [{"id": 3}]})).contains("ending"));
        assert!(err(json!({"filters": [{"id": 33}, {"id": 3}]})).contains("ending"));
        assert!(err(json!({"filters": [{"id": 33, "bogus": 1}]})).contains("bogus"));
        assert!(err(json!({"filters": [{"id": 99}]})).contains("filter id"));
        assert!(err(json!({"filters": [{"id": 3, "dist": 0}, {"id": 33}]})).contains("dist"));
        assert!(err(json!({"filters": [{"id": 33, "mode": 7}]})).contains("mode"));
        assert!(err(json!({"format": 2, "filters": [{"id": 33}]})).contains("LZMA1"));
        assert!(err(json!({"filters": [{"id": 33, "lc": 9}]})).contains("lc"));
        assert!(err(json!({"filters": [{"id": 33, "lp": 2}]})).contains("lc"));
        assert!(err(json!({"filters": [{"id": 33, "pb": 5}]})).contains("pb"));
        assert!(bytes_codec("lzma", json!({"preset": 2147483654u32})).is_ok()); // 6 | extreme
    }

    #[test]
    fn dictionaries_larger_than_a_chunk_needs_are_refused_before_allocation() {
        // Found by the AddressSanitizer fuzz run: a .lzma header declaring a
        // 2.9 GB dictionary made liblzma allocate it for a 300-byte chunk.
        let c = bytes_codec("lzma", json!({"format": 2})).unwrap();
        let mut bomb = c.encode(compressor_input()).unwrap();
        bomb[1..5].copy_from_slice(&0xadad_adadu32.to_le_bytes());
        let err = c
            .decode(bomb, crate::codec::SizeBound::Exact(500))
            .unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Corrupt);
        assert!(
            err.message.contains("declares a dictionary"),
            "{}",
            err.message
        );
        // The presets' largest dictionary (64 MiB, preset 9) is fine for a small chunk.
        for config in [json!({"preset": 9}), json!({"format": 2, "preset": 9})] {
            let c = bytes_codec("lzma", config).unwrap();
            let enc = c.encode(compressor_input()).unwrap();
            assert_eq!(
                c.decode(enc, crate::codec::SizeBound::Exact(500)).unwrap(),
                compressor_input()
            );
        }
    }

    #[test]
    fn corrupt_input() {
        for config in [
            json!({}),
            json!({"format": 2}),
            json!({"format": 3, "filters": [{"id": 33, "preset": 1}]}),
        ] {
            let c = bytes_codec("lzma", config.clone()).unwrap();
            let enc = c.encode(compressor_input()).unwrap();
            assert_eq!(
                c.decode(enc.clone(), Unbounded).unwrap(),
                compressor_input(),
                "{config}"
            );
            assert_robust(c.as_ref(), &enc, true);
        }
    }
}

//! The `zstd` codec (RFC 8878).

use std::cell::RefCell;

use serde_json::{Map, Value};
use zstd::zstd_safe;

use crate::codec::config::{check_members, keys, Member, Members};
use crate::codec::{
    check_len, decode_in_place, read_bounded, with_slack, BytesToBytesCodec, SizeBound,
};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct ZstdCodec {
    level: i32,
    checksum: bool,
}

thread_local! {
    // Contexts are reused per thread. Creating one per chunk costs an allocation
    // of ~100 KiB (decompression) or several hundred KiB (compression, whose
    // workspace is then faulted in page by page and its tables cleared); a reused
    // compression context keeps its workspace and skips most of the clearing.
    static DCTX: RefCell<zstd_safe::DCtx<'static>> = RefCell::new(zstd_safe::DCtx::create());
    static CCTX: RefCell<zstd_safe::CCtx<'static>> = RefCell::new(zstd_safe::CCtx::create());
}

/// The largest compression context a thread keeps between chunks.
const KEPT_CCTX_BYTES: usize = 8 << 20;

/// Decoded bytes one compressed byte can stand for: a block of up to 128 KiB
/// takes at least 4 bytes (an RLE block), so honest frames never declare more
/// than this ratio of their size (twice that, for margin).
pub(crate) const MAX_RATIO: usize = 1 << 16;

/// Error unless `declared` decoded bytes are possible for `src_len` compressed
/// ones and within `bound`; the size to allocate.
pub(crate) fn check_declared(declared: u64, src_len: usize, bound: SizeBound) -> Result<usize> {
    let n = bound.check_declared("zstd", declared)?;
    if n > src_len.saturating_mul(MAX_RATIO) {
        return Err(Error::corrupt(format!(
            "zstd: frames declare {declared} bytes, more than {src_len} compressed bytes can hold"
        )));
    }
    Ok(n)
}

/// The summed content size of the frames in `src` (as numcodecs'
/// `findTotalContentSize` computes it), `None` when a frame does not record
/// its size, checked against `bound` and what `src` can hold before anything
/// is allocated for it.
fn total_content_size(src: &[u8], bound: SizeBound) -> Result<Option<usize>> {
    if src.is_empty() {
        return Err(Error::corrupt("zstd: empty input holds no frame"));
    }
    let mut offset = 0;
    let mut total: u64 = 0;
    while offset < src.len() {
        let n = zstd_safe::find_frame_compressed_size(&src[offset..]).map_err(zstd_error)?;
        if n == 0 || n > src.len() - offset {
            return Err(Error::corrupt("zstd: invalid frame size"));
        }
        match zstd_safe::get_frame_content_size(&src[offset..offset + n]) {
            Ok(Some(size)) => total = total.saturating_add(size),
            Ok(None) => return Ok(None),
            Err(_) => return Err(Error::corrupt("zstd: invalid frame header")),
        }
        offset += n;
    }
    check_declared(total, src.len(), bound).map(Some)
}

/// Decode frames without a recorded content size as a stream, within `bound`.
pub(crate) fn stream_decode(src: &[u8], bound: SizeBound) -> Result<Vec<u8>> {
    let corrupt = |e: std::io::Error| Error::corrupt(format!("zstd: {e}"));
    let decoder = zstd::stream::read::Decoder::with_buffer(src).map_err(corrupt)?;
    read_bounded(decoder, bound, "zstd", corrupt)
}

/// zstd's worst case for `n` bytes (`ZSTD_compressBound`), with slack.
pub(crate) fn encoded_bound(decoded: SizeBound) -> SizeBound {
    decoded.compressed(|n| {
        let worst = zstd_safe::compress_bound(n);
        with_slack((worst >= n).then_some(worst))
    })
}

/// The zstd codec's configuration: `level` -131072..=22 and `checksum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZstdConfig {
    pub level: i32,
    pub checksum: bool,
}

/// The configuration's members: `level` (negative: zstd's fast levels) and `checksum`.
pub const MEMBERS: &[Member] = &[Member::int("level", -131072, 22), Member::bool("checksum")];

impl ZstdConfig {
    /// zarr-python's `ZstdCodec(level=0, checksum=False)` (level 0: zstd's own default, 3).
    pub const DEFAULT: ZstdConfig = ZstdConfig {
        level: 0,
        checksum: false,
    };

    pub fn parse(config: &Map<String, Value>) -> Result<Self> {
        check_members("zstd", config, &keys(MEMBERS))?;
        let level = MEMBERS[0].get_int("zstd", config)?;
        let checksum = crate::codec::config::bool_member("zstd", config, MEMBERS[1].key)?;
        Ok(ZstdConfig {
            level: level.map_or(Self::DEFAULT.level, |l| l as i32),
            checksum: checksum.unwrap_or(Self::DEFAULT.checksum),
        })
    }

    /// The complete configuration, as zarr-python writes it.
    pub fn members(self) -> Members {
        vec![
            ("level", self.level.into()),
            ("checksum", self.checksum.into()),
        ]
    }
}

impl ZstdCodec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        let ZstdConfig { level, checksum } = ZstdConfig::parse(config)?;
        Ok(ZstdCodec::new(level, checksum))
    }

    /// A codec from already-validated parameters (used by `numcodecs.zstd`).
    pub fn new(level: i32, checksum: bool) -> Self {
        ZstdCodec { level, checksum }
    }
}

/// Run `f` with this thread's kept decompression context, or with a new one
/// where that one is in use (a call from inside `f`) or gone (thread exit).
fn with_dctx<R>(f: impl FnOnce(&mut zstd_safe::DCtx<'static>) -> R) -> R {
    if DCTX.try_with(|d| d.try_borrow_mut().is_ok()) == Ok(true) {
        DCTX.with(|d| f(&mut d.borrow_mut()))
    } else {
        f(&mut zstd_safe::DCtx::create())
    }
}

/// Run `f` with this thread's kept compression context (a new one where that
/// one is in use or gone). High levels on large inputs need workspaces of
/// tens of MiB: a context that grew past [`KEPT_CCTX_BYTES`] is not kept.
fn with_cctx<R>(f: impl FnOnce(&mut zstd_safe::CCtx<'static>) -> R) -> R {
    if CCTX.try_with(|c| c.try_borrow_mut().is_ok()) != Ok(true) {
        return f(&mut zstd_safe::CCtx::create());
    }
    CCTX.with(|c| {
        let mut cctx = c.borrow_mut();
        let r = f(&mut cctx);
        if cctx.sizeof() > KEPT_CCTX_BYTES {
            *cctx = zstd_safe::CCtx::create();
        }
        r
    })
}

/// Decompress one frame into `dst` with this thread's context; the decoded length.
pub(crate) fn decompress<C: zstd_safe::WriteBuf + ?Sized>(
    dst: &mut C,
    src: &[u8],
) -> Result<usize> {
    with_dctx(|d| d.decompress(dst, src)).map_err(zstd_error)
}

/// `ZSTD_decompress` with this thread's context: what that function returns
/// (the decoded length, or zstd's error code), for C callers.
pub(crate) fn decompress_as_zstd_does<C: zstd_safe::WriteBuf + ?Sized>(
    dst: &mut C,
    src: &[u8],
) -> usize {
    with_dctx(|d| d.decompress(dst, src)).unwrap_or_else(|code| code)
}

/// `ZSTD_compress` with this thread's context: the same bytes (at `level`,
/// ignoring every other parameter, as `ZSTD_compressCCtx` does) and the same
/// return value (the compressed length, or zstd's error code), for C callers.
pub(crate) fn compress_as_zstd_does<C: zstd_safe::WriteBuf + ?Sized>(
    dst: &mut C,
    src: &[u8],
    level: i32,
) -> usize {
    with_cctx(|c| c.compress(dst, src, level)).unwrap_or_else(|code| code)
}

fn zstd_error(code: usize) -> Error {
    Error::corrupt(format!("zstd: {}", zstd_safe::get_error_name(code)))
}

impl BytesToBytesCodec for ZstdCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        let param_error = |c| Error::value(format!("zstd: {}", zstd_safe::get_error_name(c)));
        let mut out = crate::alloc::with_capacity(zstd_safe::compress_bound(decoded.len()))?;
        with_cctx(|cctx| {
            // A reset forgets the previous chunk's parameters (and any frame an
            // error left half-written); the workspace stays allocated.
            cctx.reset(zstd_safe::ResetDirective::SessionAndParameters)
                .map_err(param_error)?;
            cctx.set_parameter(zstd_safe::CParameter::CompressionLevel(self.level))
                .map_err(param_error)?;
            cctx.set_parameter(zstd_safe::CParameter::ChecksumFlag(self.checksum))
                .map_err(param_error)?;
            cctx.compress2(&mut out, &decoded).map_err(param_error)
        })?;
        Ok(out)
    }

    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        encoded_bound(decoded)
    }

    decode_in_place!();
}

/// `decode` of bytes wherever they are. Concatenated frames decode to the
/// concatenation of their content, as numcodecs (zarr-python's zstd)
/// decodes them.
fn decode_slice(encoded: &[u8], bound: SizeBound) -> Result<Vec<u8>> {
    match total_content_size(encoded, bound)? {
        Some(size) => {
            // Decoded into the spare capacity: no zeroing of bytes that
            // zstd overwrites anyway; more output than declared is an error.
            let mut out = crate::alloc::with_capacity(size)?;
            let n = decompress(&mut out, encoded)?;
            check_len(n, size)?;
            Ok(out)
        }
        // A frame without its content size (streamed): decode as a stream.
        None => stream_decode(encoded, bound),
    }
}

/// `decode_into` of bytes wherever they are.
fn decode_slice_into(encoded: &[u8], out: &mut [u8]) -> Result<()> {
    // Declared sizes (when the frames record them) must add up to `out`'s.
    match total_content_size(encoded, SizeBound::Exact(out.len()))? {
        Some(_) => {
            let n = decompress(out, encoded)?;
            check_len(n, out.len())
        }
        // Without a recorded size, as `decode` does (and numcodecs): a
        // stream, whose decoder refuses windows beyond its limit. Decoding
        // straight into `out` needs no window and accepted such frames,
        // which `decode` refused.
        None => {
            let decoded = stream_decode(encoded, SizeBound::Exact(out.len()))?;
            check_len(decoded.len(), out.len())?;
            out.copy_from_slice(&decoded);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::SizeBound::Unbounded;
    use serde_json::json;

    fn codec(cfg: Value) -> Result<ZstdCodec> {
        ZstdCodec::from_config(cfg.as_object().unwrap())
    }

    #[test]
    fn round_trip_with_and_without_checksum() {
        let data = crate::codec::tests::sample(50_000);
        for checksum in [false, true] {
            let c = codec(json!({"level": 3, "checksum": checksum})).unwrap();
            let enc = c.encode(data.clone()).unwrap();
            assert_eq!(&enc[..4], &[0x28, 0xb5, 0x2f, 0xfd]); // zstd magic
                                                              // Frame header descriptor bit 2 is the checksum flag.
            assert_eq!(enc[4] & 0x04 != 0, checksum);
            assert_eq!(c.decode(enc.clone(), Unbounded).unwrap(), data);
            let mut out = vec![0; data.len()];
            c.decode_into(enc.clone(), &mut out).unwrap();
            assert_eq!(out, data);
            let mut short = vec![0; data.len() - 1];
            assert!(c.decode_into(enc, &mut short).is_err());
        }
    }

    /// What a fresh context writes for `data` at these parameters.
    fn fresh_frame(data: &[u8], level: i32, checksum: bool) -> Vec<u8> {
        let mut cctx = zstd_safe::CCtx::create();
        cctx.set_parameter(zstd_safe::CParameter::CompressionLevel(level))
            .unwrap();
        cctx.set_parameter(zstd_safe::CParameter::ChecksumFlag(checksum))
            .unwrap();
        let mut out = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
        cctx.compress2(&mut out, data).unwrap();
        out
    }

    #[test]
    fn a_context_in_use_is_replaced_by_a_new_one_for_the_nested_call() {
        let data = crate::codec::tests::sample(20_000);
        let mut want = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
        zstd_safe::compress(&mut want, &data, 5).unwrap();
        let mut got = Vec::with_capacity(want.capacity());
        let n = with_cctx(|_kept| compress_as_zstd_does(&mut got, &data, 5));
        assert_eq!((n, &got), (want.len(), &want));
        let mut back = vec![0u8; data.len()];
        let n = with_dctx(|_kept| decompress_as_zstd_does(&mut back[..], &got));
        assert_eq!((n, &back), (data.len(), &data));
    }

    #[test]
    fn reused_context_writes_what_a_fresh_one_does() {
        let small = crate::codec::tests::sample(70_000);
        let large = crate::codec::tests::sample(6 << 20);
        // Levels and checksums change between chunks on one thread; a reused
        // context must not carry any of them over.
        for (data, level, checksum) in [
            (&small, 1, false),
            (&small, 19, true),
            (&small, -5, false),
            (&large, 19, false),
            (&small, 3, true),
            (&small, 3, false),
        ] {
            let enc = ZstdCodec::new(level, checksum)
                .encode(data.clone())
                .unwrap();
            assert_eq!(enc, fresh_frame(data, level, checksum), "level {level}");
            assert_eq!(
                &ZstdCodec::new(level, false).decode(enc, Unbounded).unwrap(),
                data
            );
            // A level-19 context for megabytes is not kept for the next chunk.
            let kept = CCTX.with(|c| c.borrow().sizeof());
            assert!(
                kept <= KEPT_CCTX_BYTES,
                "kept {kept} bytes after level {level}"
            );
        }
    }

    #[test]
    fn streamed_frame_without_content_size() {
        let data = crate::codec::tests::sample(10_000);
        let mut enc = Vec::new();
        {
            let mut w = zstd::stream::Encoder::new(&mut enc, 1).unwrap();
            std::io::Write::write_all(&mut w, &data).unwrap();
            w.finish().unwrap();
        }
        let c = codec(json!({"level": 0})).unwrap();
        assert_eq!(c.decode(enc, Unbounded).unwrap(), data);
    }

    #[test]
    fn a_frame_without_content_size_and_a_huge_window_is_refused_both_ways() {
        // Found by the decode_numcodecs fuzz target: a 2^29-byte window, no
        // content size, one RLE block of 512 bytes. The stream decoder refuses
        // the window; decoding into a buffer used to accept it.
        let frame = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x9f, 0x03, 0x10, 0x00, 0xed];
        let c = codec(json!({"level": 0})).unwrap();
        let err = c.decode(frame.to_vec(), Unbounded).unwrap_err();
        assert!(err.message.contains("too much memory"), "{}", err.message);
        let mut out = vec![0u8; 512];
        let err = c.decode_into(frame.to_vec(), &mut out).unwrap_err();
        assert!(err.message.contains("too much memory"), "{}", err.message);
        // The same block in a frame with an ordinary window decodes both ways.
        let small = [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x48, 0x03, 0x10, 0x00, 0xed];
        assert_eq!(
            c.decode(small.to_vec(), Unbounded).unwrap(),
            vec![0xed; 512]
        );
        c.decode_into(small.to_vec(), &mut out).unwrap();
        assert_eq!(out, vec![0xed; 512]);
    }

    #[test]
    fn concatenated_frames_decode_the_same_both_ways() {
        // numcodecs (zarr-python's zstd) decodes concatenated frames: so must
        // both decode paths (decode used to see only the first frame's size).
        let c = ZstdCodec::new(1, false);
        let data = crate::codec::tests::sample(100);
        let mut two = c.encode(data[..40].to_vec()).unwrap();
        two.extend(c.encode(data[40..].to_vec()).unwrap());
        assert_eq!(c.decode(two.clone(), SizeBound::Exact(100)).unwrap(), data);
        assert_eq!(c.decode(two.clone(), Unbounded).unwrap(), data);
        let mut out = vec![0; 100];
        c.decode_into(two.clone(), &mut out).unwrap();
        assert_eq!(out, data);
        assert!(c.decode(two.clone(), SizeBound::Exact(99)).is_err());
        assert!(c.decode_into(two, &mut out[..99]).is_err());
    }

    #[test]
    fn config_validation() {
        assert!(codec(json!({"level": 23})).is_err());
        assert!(codec(json!({"level": 1, "checksum": 1})).is_err());
        assert!(codec(json!({"level": -5})).is_ok());
    }
}

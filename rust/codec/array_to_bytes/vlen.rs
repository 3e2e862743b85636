//! `vlen-utf8` and `vlen-bytes`: variable-length elements in numcodecs'
//! framing — a u32le element count, then per element a u32le byte length and
//! the bytes. As array->bytes codecs they pass the frame through (checking it);
//! the array layer builds and splits frames with [`build_frame`] and
//! [`split_frame`].

use std::ops::Range;

use serde_json::{Map, Value};

use crate::codec::config::check_members;
use crate::codec::{ArrayToBytesCodec, ChunkSpec, SizeBound};
use crate::dtype::DataKind;
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct VlenCodec {
    name: &'static str,
    utf8: bool,
    elements: usize,
}

impl VlenCodec {
    pub fn from_config(
        name: &'static str,
        config: &Map<String, Value>,
        spec: &ChunkSpec,
    ) -> Result<Self> {
        check_members(name, config, &[])?;
        let utf8 = name == "vlen-utf8";
        let ok = match spec.dtype.kind {
            DataKind::String => true,
            DataKind::Bytes => !utf8,
            _ => false,
        };
        if !ok {
            return Err(Error::metadata(format!(
                "codec '{name}' needs the {} data type",
                if utf8 { "string" } else { "bytes" }
            )));
        }
        Ok(VlenCodec {
            name,
            utf8,
            elements: spec.num_elements(),
        })
    }
}

/// The frame of `items`.
pub fn build_frame<'a>(items: impl ExactSizeIterator<Item = &'a [u8]>) -> Result<Vec<u8>> {
    let too_big = || Error::value("a variable-length chunk is larger than 4 GiB");
    let n = u32::try_from(items.len()).map_err(|_| too_big())?;
    let mut out = crate::alloc::with_capacity(4 + items.len() * 8)?;
    out.extend_from_slice(&n.to_le_bytes());
    for item in items {
        let len = u32::try_from(item.len()).map_err(|_| too_big())?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(item);
    }
    Ok(out)
}

/// Where each of the `n` elements of a frame is, checking the framing.
pub fn split_frame(frame: &[u8], n: usize, utf8: bool) -> Result<Vec<Range<usize>>> {
    let corrupt = |what: String| Error::corrupt(format!("variable-length chunk: {what}"));
    let read_u32 = |at: usize| -> Result<usize> {
        frame
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or_else(|| corrupt(format!("truncated at byte {at}")))
    };
    let count = read_u32(0)?;
    if count != n {
        return Err(corrupt(format!(
            "holds {count} elements, the chunk has {n}"
        )));
    }
    // Each element takes at least its 4-byte length: a frame too short for its
    // count is refused before anything is allocated for the count.
    if n > (frame.len() - 4) / 4 {
        return Err(corrupt(format!(
            "{} bytes cannot hold {n} elements",
            frame.len()
        )));
    }
    let mut ranges = crate::alloc::with_capacity(n)?;
    let mut at = 4;
    for i in 0..n {
        let len = read_u32(at)?;
        let start = at + 4;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= frame.len())
            .ok_or_else(|| corrupt(format!("element {i} ends past the end of the chunk")))?;
        if utf8 && std::str::from_utf8(&frame[start..end]).is_err() {
            return Err(corrupt(format!("element {i} is not valid UTF-8")));
        }
        ranges.push(start..end);
        at = end;
    }
    if at != frame.len() {
        return Err(corrupt(format!(
            "{} bytes after the last element",
            frame.len() - at
        )));
    }
    Ok(ranges)
}

impl ArrayToBytesCodec for VlenCodec {
    fn encode(&self, frame: Vec<u8>) -> Result<Vec<u8>> {
        Ok(frame)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        bound.check(self.name, encoded.len())?;
        split_frame(&encoded, self.elements, self.utf8).map_err(|e| e.context(self.name))?;
        Ok(encoded)
    }

    /// Elements have any length: a frame has no bound but memory.
    fn encoded_bound(&self) -> SizeBound {
        SizeBound::Unbounded
    }

    fn is_identity(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_round_trip_matches_numcodecs_layout() {
        let items: [&[u8]; 3] = [b"a", "b\u{e9}".as_bytes(), b""];
        let frame = build_frame(items.iter().copied()).unwrap();
        // numcodecs VLenUTF8 of ["a", "bé", ""]
        assert_eq!(
            frame,
            [3, 0, 0, 0, 1, 0, 0, 0, b'a', 3, 0, 0, 0, b'b', 0xc3, 0xa9, 0, 0, 0, 0].to_vec()
        );
        let ranges = split_frame(&frame, 3, true).unwrap();
        let got: Vec<&[u8]> = ranges.iter().map(|r| &frame[r.clone()]).collect();
        assert_eq!(got, items.to_vec());
    }

    #[test]
    fn bad_frames_are_errors() {
        let frame = build_frame([b"abc".as_slice()].into_iter()).unwrap();
        assert!(split_frame(&frame, 2, false).is_err());
        assert!(split_frame(&frame[..frame.len() - 1], 1, false).is_err());
        assert!(split_frame(&[frame.clone(), vec![0]].concat(), 1, false).is_err());
        assert!(split_frame(&[1, 0, 0, 0, 255, 255, 255, 255], 1, false).is_err());
        let bad_utf8 = build_frame([[0xff].as_slice()].into_iter()).unwrap();
        assert!(split_frame(&bad_utf8, 1, true).is_err());
        assert!(split_frame(&bad_utf8, 1, false).is_ok());
        assert!(split_frame(&[], 0, false).is_err());
    }

    #[test]
    fn a_count_the_frame_cannot_hold_allocates_nothing() {
        use crate::alloc::tracking::largest_allocation;
        // 2^30 elements claimed (and expected) by an 8-byte frame.
        let n = 1usize << 30;
        let frame = [(n as u32).to_le_bytes(), 0u32.to_le_bytes()].concat();
        let (got, largest) = largest_allocation(|| split_frame(&frame, n, false));
        let err = got.unwrap_err();
        assert!(
            err.message
                .contains("8 bytes cannot hold 1073741824 elements"),
            "{}",
            err.message
        );
        assert!(largest < 1024, "allocated {largest} bytes");
    }
}

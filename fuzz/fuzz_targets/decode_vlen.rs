//! Variable-length chunks: with an even first byte, a chain of chains.json's
//! "vlen" group (picked by the second byte) decodes the rest; with an odd one,
//! the rest is a frame split into the element count of the next two bytes.
#![no_main]

use zarrox::codec::array_to_bytes::vlen::{build_frame, split_frame};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        zarrox_fuzz::decode_target("vlen", rest);
        return;
    }
    let [a, b, frame @ ..] = rest else {
        return;
    };
    let n = usize::from(u16::from_le_bytes([*a, *b]));
    for utf8 in [false, true] {
        if let Ok(ranges) = split_frame(frame, n, utf8) {
            // A valid frame is rebuilt byte for byte from its elements.
            let items = ranges.iter().map(|r| &frame[r.clone()]);
            assert_eq!(build_frame(items).unwrap(), frame);
        }
    }
});

//! Typed views of chunk buffers: codecs that hand elements to a library as
//! `&[T]` (casts, pcodec, zfp) see a chunk's native-order bytes as `T`s,
//! borrowed when the buffer is aligned for `T`, else through an aligned copy.

use std::borrow::Cow;

use bytemuck::Pod;

/// `bytes` (a whole number of `T`s) as `T`s.
pub(crate) fn as_typed<T: Pod>(bytes: &[u8]) -> Cow<'_, [T]> {
    match bytemuck::try_cast_slice(bytes) {
        Ok(typed) => Cow::Borrowed(typed),
        Err(_) => Cow::Owned(bytemuck::pod_collect_to_vec(bytes)),
    }
}

/// Run `f` on `out` (a whole number of `T`s) seen as `T`s: in place when it
/// is aligned for `T`, else on an aligned copy written back afterwards.
pub(crate) fn with_typed_mut<T: Pod, R>(out: &mut [u8], f: impl FnOnce(&mut [T]) -> R) -> R {
    match bytemuck::try_cast_slice_mut(out) {
        Ok(typed) => f(typed),
        Err(_) => {
            let mut typed: Vec<T> = bytemuck::pod_collect_to_vec(out);
            let r = f(&mut typed);
            out.copy_from_slice(bytemuck::cast_slice(&typed));
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_unaligned_buffers_give_the_same_elements() {
        let words: Vec<u32> = vec![1, 2, 0xdead_beef];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let mut shifted = vec![0u8; bytes.len() + 1];
        shifted[1..].copy_from_slice(&bytes);
        for buf in [&bytes[..], &shifted[1..]] {
            assert_eq!(&*as_typed::<u32>(buf), &words[..]);
        }
        for start in [0, 1] {
            let mut buf = vec![0u8; bytes.len() + 1];
            let view = &mut buf[start..start + bytes.len()];
            with_typed_mut::<u32, _>(view, |t| t.copy_from_slice(&words));
            assert_eq!(&buf[start..start + bytes.len()], &bytes[..]);
        }
    }
}

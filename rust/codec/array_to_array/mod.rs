//! Array -> array codecs: each maps a chunk's elements to elements of another
//! shape, order or data type (the zarr v3 specification's and the zarr-extensions
//! registry's).

pub mod bitround;
pub mod cast_value;
pub mod reshape;
pub mod scale_offset;
pub mod transpose;

//! Builds c-blosc 1 (vendor/c-blosc, see its README.md) the way its own CMake
//! build does, which the `blosc-src` crate does not:
//!
//! - On x86-64, the SSE2 and the AVX2 shuffles are both compiled (each file
//!   with its own instruction set flag) and c-blosc picks one at run time
//!   from the CPU's features. `blosc-src` compiles the AVX2 files only when
//!   the whole crate targets AVX2, which a wheel for every x86-64 cannot.
//! - Its calls of `ZSTD_compress` and `ZSTD_decompress` (one per stream of
//!   every block) go to zarrox's functions of the same signature
//!   (`codec::blosc_sys`), which use the thread's kept zstd context instead of
//!   creating one per call. The bytes are the same (`ZSTD_compressCCtx` at a
//!   level is `ZSTD_compress` at that level).
//!
//! zstd, lz4 and zlib are the copies the `zstd-sys`, `lz4-sys` and `libz-sys`
//! crates build, found through the include directories they export.

use std::env;
use std::path::{Path, PathBuf};

const BLOSC_DIR: &str = "vendor/c-blosc/blosc";

/// The sources every build compiles (upstream's list without the SIMD files).
const SOURCES: [&str; 6] = [
    "blosc.c",
    "blosclz.c",
    "fastcopy.c",
    "shuffle.c",
    "shuffle-generic.c",
    "bitshuffle-generic.c",
];

fn include_of(dep: &str) -> PathBuf {
    let var = format!("DEP_{dep}_INCLUDE");
    env::var_os(&var).map(PathBuf::from).unwrap_or_else(|| {
        panic!("{var} is not set: the crate building it must export its headers")
    })
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=vendor/c-blosc");

    let dir = Path::new(BLOSC_DIR);
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let msvc = env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("msvc");
    let x86_64 = arch == "x86_64";

    let mut blosc = cc::Build::new();
    blosc
        .include(dir)
        .include(include_of("LZ4"))
        .include(include_of("Z"))
        .include(include_of("ZSTD"))
        .define("HAVE_LZ4", None)
        .define("HAVE_ZLIB", None)
        .define("HAVE_ZSTD", None)
        .define("ZSTD_compress", "zarrox_blosc_zstd_compress")
        .define("ZSTD_decompress", "zarrox_blosc_zstd_decompress")
        .warnings(false);
    for file in SOURCES {
        blosc.file(dir.join(file));
    }
    if msvc {
        blosc.file(dir.join("win32/pthread.c"));
    }

    if x86_64 {
        // The SIMD files, each compiled for its instruction set; the rest of
        // c-blosc only calls them once the CPU is known to have it.
        let simd = |files: [&str; 2], flag: &str, msvc_flag: Option<&str>| {
            let mut b = cc::Build::new();
            b.include(dir).warnings(false);
            if let Some(f) = if msvc { msvc_flag } else { Some(flag) } {
                b.flag(f);
            }
            for file in files {
                b.file(dir.join(file));
            }
            b.compile_intermediates()
        };
        // SSE2 is part of x86-64 (MSVC needs no flag there).
        let sse2 = simd(["shuffle-sse2.c", "bitshuffle-sse2.c"], "-msse2", None);
        let avx2 = simd(
            ["shuffle-avx2.c", "bitshuffle-avx2.c"],
            "-mavx2",
            Some("/arch:AVX2"),
        );
        blosc
            .define("SHUFFLE_SSE2_ENABLED", None)
            .define("SHUFFLE_AVX2_ENABLED", None)
            .objects(sse2)
            .objects(avx2);
    }
    blosc.compile("zarrox_blosc");
}

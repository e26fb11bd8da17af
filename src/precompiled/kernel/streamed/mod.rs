//! Evaluated rows stored past the caches, one module per architecture chosen at compile
//! time, with a portable fallback behind the same functions.
//!
//! Evaluation over the previous proof's vectors writes a, b and c once each, and nothing
//! reads them again until the prover, long after they left the caches. An ordinary store
//! first reads the line it writes, so each byte written crosses the memory bus twice, and
//! the bus is what evaluation on several threads runs short of. Streaming stores write the
//! line without reading it. Fresh vectors are not streamed: their first write faults the
//! page in either way; storage a caller owns is (`Recording::evaluate_to`), since it is
//! kept from proof to proof as recycled vectors are (the measurements: docs/journal.md).

#[cfg(all(target_arch = "x86_64", feature = "neptune-11"))]
#[allow(unsafe_code)]
#[path = "x86_64.rs"]
mod arch;

#[cfg(not(all(target_arch = "x86_64", feature = "neptune-11")))]
#[path = "portable.rs"]
mod arch;

use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) use arch::{fence, store, store_uninit};

/// Whether rows over recycled vectors are streamed (`tuning::Knobs::streamed_rows`).
static STREAMING: AtomicBool = AtomicBool::new(true);

/// Turns the streaming stores off or back on for the whole process.
pub(crate) fn set_enabled(on: bool) {
    STREAMING.store(on, Ordering::Relaxed);
}

/// Whether rows of `Scalar` written in place go through [`store`]: this build streams
/// that type, and the bench did not turn it off.
#[inline]
pub(crate) fn streams<Scalar: 'static>() -> bool {
    arch::streams::<Scalar>() && STREAMING.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    #[test]
    fn stores_give_the_values_at_any_offset_and_length() {
        let mut rng = XorShiftRng::seed_from_u64(7);
        let values: Vec<blstrs::Scalar> =
            (0..300).map(|_| blstrs::Scalar::random(&mut rng)).collect();
        for (offset, count) in [(0, 0), (0, 1), (1, 3), (3, 256), (7, 293)] {
            let mut out = vec![blstrs::Scalar::ONE; 300];
            store(&mut out[offset..offset + count], &values[..count]);
            fence();
            assert_eq!(
                out[offset..offset + count],
                values[..count],
                "{offset}, {count}"
            );
            assert!(out[..offset]
                .iter()
                .chain(&out[offset + count..])
                .all(|v| *v == blstrs::Scalar::ONE));
        }
        // Any other type is copied.
        let mut words = [0u64; 5];
        store(&mut words[1..4], &[1, 2, 3]);
        assert_eq!(words, [0, 1, 2, 3, 0]);
    }
}

//! The knobs the defaults were chosen with, for measuring them again (the bench's variants
//! turn them). A prover needs none of them: [`crate::SynthesisOptions::default`] and the
//! drop-ins use what measured fastest, and nothing here changes what is computed, only how.

use ff::PrimeField;

use bellpepper_core::Circuit;

use crate::assignment::{ProvingAssignment, SynthesisOptions};
use crate::error::Error;
pub use crate::eval::EvalKernel;
use crate::pool::LcPool;
pub use crate::pool::PoolStats;
use crate::precompiled::Recording;
use crate::vectors::ProverVectors;

/// The settings of [`SynthesisOptions`] that only measurements choose.
pub trait Tune: Sized {
    /// With or without the owner-local pool of linear-combination buffers.
    fn with_pool(self, pool: bool) -> Self;
    /// With this evaluation kernel.
    fn with_kernel(self, kernel: EvalKernel) -> Self;
    /// Dropping pool buffers that grew beyond this many terms.
    fn with_max_kept_terms(self, max_kept_terms: usize) -> Self;
}

impl Tune for SynthesisOptions {
    fn with_pool(self, pool: bool) -> Self {
        SynthesisOptions { pool, ..self }
    }

    fn with_kernel(self, kernel: EvalKernel) -> Self {
        SynthesisOptions { kernel, ..self }
    }

    fn with_max_kept_terms(self, max_kept_terms: usize) -> Self {
        SynthesisOptions {
            max_kept_terms,
            ..self
        }
    }
}

/// What a [`ProvingAssignment`] ran with.
pub trait Observe {
    /// The buffer pool's counters, when the pool is on.
    fn pool_stats(&self) -> Option<PoolStats>;
    /// The evaluation kernel in use.
    fn kernel(&self) -> EvalKernel;
}

impl<Scalar: PrimeField> Observe for ProvingAssignment<Scalar> {
    fn pool_stats(&self) -> Option<PoolStats> {
        self.lcs.as_ref().map(LcPool::stats)
    }

    fn kernel(&self) -> EvalKernel {
        self.kernel
    }
}

/// Turns the eight-lane products (AVX-512 IFMA) of Poseidon's native witness and of
/// pre-compiled evaluation off or back on, for the whole process. They are on by default
/// where the CPU has them; off, every product takes the scalar path, with the same results.
#[cfg(feature = "neptune-11")]
pub fn set_lanes(on: bool) {
    crate::lanes::set_enabled(on);
}

/// Turns [`crate::branches::spread`] off or back on, for the whole process. On by default;
/// off, it hands every part back, and the circuit runs them as it does in a system that
/// cannot branch (a PoRep partition's challenges in a loop, PoSt sectors in systems from
/// `new()` on the pool's threads, appended), with the same results.
pub fn set_branches(on: bool) {
    crate::branches::set_branches(on);
}

/// Turns the branches of a prover's assignment reading the aux values before them from one
/// copy shared by all of them ([`crate::ProvingAssignment`]: two branches or more, 65,536
/// values or more) off or back on, for the whole process. On by default; off, each branch
/// copies them, with the same results.
pub fn set_shared_branch_values(on: bool) {
    crate::assignment::set_shared_values(on)
}

/// Turns one branch per thread, each running consecutive parts, for a system that copies its
/// branches in ([`crate::branches::spread`]) off or back on, for the whole process. On by
/// default; off, such a system gets a branch per part, as a witness generator does, with the
/// same results (and the same recorded places).
pub fn set_branch_per_thread(on: bool) {
    crate::branches::set_branch_per_thread(on);
}

/// Turns the witness of a recorded circuit's parts, each written on its own thread where the
/// recording places it ([`crate::precompiled::Recording::witness`]), off or back on, for the
/// whole process. On by default; off, the parts run one after another, with the same
/// results.
pub fn set_spread_witness(on: bool) {
    crate::precompiled::witness::spread::set_enabled(on);
}

/// Turns the streaming stores of rows evaluated over the previous proof's vectors off or
/// back on, for the whole process. On by default where the build has them (x86_64 with the
/// `neptune-11` feature, which brings blstrs, for blstrs' scalars); off, the rows are stored
/// through the caches, with the same results.
pub fn set_streamed_rows(on: bool) {
    crate::precompiled::kernel::streamed::set_enabled(on);
}

/// Turns the classification of witness values as their generator writes them (0, 1 or
/// other, for evaluation) off or back on, for the whole process. On by default; off,
/// evaluation classifies every value after the witness is complete, reading them all back
/// from memory, with the same results.
pub fn set_classify_as_written(on: bool) {
    crate::precompiled::set_classify_as_written(on);
}

/// What a drop-in does with the first member of a structure it has not seen: records the
/// circuit while synthesizing it directly, and checks that the recording reproduces those
/// vectors. The bench times it as the first batch's cost.
pub fn record_first_member<Scalar: PrimeField, C: Circuit<Scalar>>(
    circuit: C,
) -> Result<(Recording<Scalar>, ProverVectors<Scalar>), Error> {
    let (recording, vectors) = Recording::record_and_synthesize(circuit)?;
    let recording = recording?;
    recording.reproduces(&vectors)?;
    Ok((recording, vectors))
}

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

/// The process-wide choices the defaults were measured with, all on by default: each one's
/// alternative (off) gives the same results, measured slower (docs/journal.md). The bench
/// turns them to measure again; a prover needs none of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Knobs {
    /// Poseidon's native witness and pre-compiled evaluation's products on eight lanes of
    /// AVX-512 IFMA where the CPU has them: WindowPoSt 24.2x upstream against 17.0x.
    pub lanes: bool,
    /// One partition's parts spread over rayon's threads ([`crate::branches::spread`]):
    /// the real 8 MiB PoRep from a recording 1.86x on two threads.
    pub branches: bool,
    /// A prover's branches share one copy of the values before them (two branches or more,
    /// 65,536 values or more): SnapDeals direct 10-14% faster, a first member 24-27%.
    pub shared_branch_values: bool,
    /// A branch per thread, each running consecutive parts, for a system that copies its
    /// branches in: SnapDeals direct 1.18-1.27x on two threads against 1.07-1.14x.
    pub branch_per_thread: bool,
    /// A recording's parts' witness written on their threads, in place: `porep` x2 from a
    /// recording 1.05-1.16x against the parts one after another.
    pub spread_witness: bool,
    /// Rows over the previous proof's vectors written with streaming stores (x86_64):
    /// PoRep 1.06-1.10x on one thread.
    pub streamed_rows: bool,
    /// Witness values classified as they are written instead of read back by evaluation:
    /// the real 8 MiB PoRep 1.05-1.11x on one thread.
    pub classify_as_written: bool,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            lanes: true,
            branches: true,
            shared_branch_values: true,
            branch_per_thread: true,
            spread_witness: true,
            streamed_rows: true,
            classify_as_written: true,
        }
    }
}

/// Sets every knob for the whole process (what is computed never changes, only how).
pub fn set(knobs: Knobs) {
    #[cfg(feature = "neptune-11")]
    crate::lanes::set_enabled(knobs.lanes);
    crate::branches::set_branches(knobs.branches);
    crate::assignment::set_shared_values(knobs.shared_branch_values);
    crate::branches::set_branch_per_thread(knobs.branch_per_thread);
    crate::precompiled::witness::spread::set_enabled(knobs.spread_witness);
    crate::precompiled::kernel::streamed::set_enabled(knobs.streamed_rows);
    crate::precompiled::witness::kinds::set_as_written(knobs.classify_as_written);
}

/// What a drop-in does with the first member of a structure it has not seen: records the
/// circuit while synthesizing it directly, and checks that the recording reproduces those
/// vectors. The bench times it as the first batch's cost.
pub fn record_first_member<Scalar: PrimeField, C: Circuit<Scalar>>(
    circuit: C,
) -> Result<(Recording<Scalar>, ProverVectors<Scalar>), Error> {
    let (vectors, recording) = Recording::synthesize_and_record(circuit)?;
    Ok((recording?, vectors))
}

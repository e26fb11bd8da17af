//! synthpool: fast CPU synthesis of Groth16 circuits, bit-identical to bellperson.
//!
//! - [`ProvingAssignment`]: a public constraint system that evaluates each constraint as it
//!   is enforced, drawing its linear-combination buffers from an owner-local [`VecPool`].
//! - [`eval`]: the evaluation kernels (portable and prefetching), selectable at run time.
//! - [`synthesize`] / [`synthesize_batch`] and [`prover`]'s `prove`: synthesis split from
//!   proving, so assignments can be made on CPU threads and proven later.

pub mod assignment;
pub mod circuits;
pub mod counters;
pub mod eval;
pub mod pce;
pub mod pool;
pub mod prover;
pub mod report;
pub mod sha256;
pub mod variants;

pub use assignment::{ProvingAssignment, Shape, SynthesisOptions};
pub use eval::EvalKernel;
pub use pool::{PoolStats, VecPool};
pub use prover::{synthesize, synthesize_batch, synthesize_batch_with, synthesize_with};

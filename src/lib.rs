//! synthpool: fast CPU synthesis of Groth16 circuits, bit-identical to bellperson.
//!
//! - [`synthesize`] / [`synthesize_batch`]: direct synthesis into [`ProverVectors`] through
//!   [`ProvingAssignment`], a constraint system that evaluates each constraint as it is
//!   enforced, drawing its linear-combination buffers from an owner-local pool.
//! - [`precompiled`]: record a circuit's R1CS once, then synthesize each proof by witness
//!   generation and sparse evaluation.
//! - [`sha256`]: the SHA-256 family, constraint-identical to bellperson's, allocation-free,
//!   with a native witness when the constraint system only generates witnesses.
//! - `poseidon` (with the `neptune-11` feature): neptune's Poseidon gadget,
//!   constraint-identical, with a native witness.
//! - `prover` and `groth16` (with the `bellperson-0.26` or `bellperson-0.27` feature):
//!   proving from [`ProverVectors`], and drop-ins for bellperson's batch provers that
//!   synthesize through recordings that earned trust, a bounded number of members at a time.
//! - [`tuning`]: the knobs the defaults were chosen with (evaluation kernels, the buffer
//!   pool), for the bench.

#![deny(unsafe_code)]
#![deny(missing_docs)]
#![deny(unreachable_pub)]
#![deny(missing_debug_implementations)]

#[cfg(all(feature = "bellperson-0.26", feature = "cuda-supraseal"))]
compile_error!(
    "synthpool: `cuda-supraseal` proves with bellperson 0.27 (filecoin-proofs 19.1); the \
     bellperson 0.26 drop-ins (filecoin-proofs 19.0) cannot take supraseal's parameters"
);

mod assignment;
pub mod branches;
mod error;
mod eval;
#[cfg(any(feature = "bellperson-0.26", feature = "bellperson-0.27"))]
pub mod groth16;
#[cfg(feature = "neptune-11")]
mod lanes;
mod pool;
#[cfg(feature = "neptune-11")]
pub mod poseidon;
pub mod precompiled;
mod protocol;
#[cfg(any(feature = "bellperson-0.26", feature = "bellperson-0.27"))]
pub mod prover;
mod regular_file;
pub mod sha256;
mod shape;
mod synthesize;
pub mod tuning;
mod vectors;
#[cfg(any(feature = "bellperson-0.26", feature = "bellperson-0.27"))]
mod warn_once;
mod wide_sum;

pub use assignment::{ProvingAssignment, SynthesisOptions};
pub use error::{Error, FileProblem, Limit, Side, VariableKind};
pub use shape::Shape;
pub use synthesize::{
    synthesize, synthesize_batch, synthesize_batch_each, synthesize_batch_with, synthesize_with,
};
pub use vectors::ProverVectors;

/// The README's examples, compiled and run by `cargo test` so they cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

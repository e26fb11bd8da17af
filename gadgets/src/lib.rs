//! A drop-in implementation of the bellpepper-core 0.2 API (circuit traits, linear
//! combinations, boolean and number gadgets, the test constraint system) that lays out
//! bit-identical constraints, with paths that build them without temporary allocations.
//!
//! Select it for a whole dependency graph with
//! `[patch.crates-io] bellpepper-core = { path = "gadgets" }`.
//!
//! Additions to the upstream API:
//! - [`LinearCombination::from_buffers`] / [`LinearCombination::into_buffers`]: build an LC
//!   on recycled term buffers and take them back; [`LinearCombination::input_terms`] /
//!   [`LinearCombination::aux_terms`] read its terms as slices.
//! - [`boolean::Boolean::add_to_lc`] / [`boolean::Boolean::sub_from_lc`] and
//!   [`num::Num::add_to_lc`] / [`num::Num::sub_from_lc`]: add or subtract a gadget's
//!   combination in place instead of building it and merging it.
//! - [`ConstraintSystem::enforce_with_a_value`]: a constraint whose `a` side's value the
//!   caller already has, so a prover's assignment need not sum its terms again (Poseidon's
//!   s-box inputs, a combination over up to 66 variables); every other system enforces it
//!   as usual.
//! - [`ConstraintSystem::spreading`] and the branching protocol it reaches ([`Spreading`]:
//!   [`Ways`], branches taken at once, the next part, the [`Landing`] of a branch's own
//!   variables): where a system can synthesize a circuit's independent parts on other
//!   threads and append them in order, or take them one after another where upstream's
//!   circuits synthesize them apart to append them. Every other system answers `None`, and
//!   the circuit runs as before.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod constraint_system;
mod gadgets;
mod lc;
mod spreading;
mod terms;
mod util_cs;

pub use constraint_system::{Circuit, ConstraintSystem, Namespace, SynthesisError};
pub use gadgets::{boolean, num};
pub use lc::{Index, LinearCombination, Term, Variable};
pub use spreading::{Landing, Spreading, Ways};
pub use util_cs::{test_cs, Comparable, Constraint, Delta};

/// The bellpepper-core version whose API this crate provides.
pub const BELLPEPPER_VERSION: &str = env!("CARGO_PKG_VERSION");

//! The drop-ins for bellperson 0.27 (filecoin-proofs 19.1): for any of bellperson's
//! parameter sources, or with feature `cuda-supraseal` for supraseal's parameters, as
//! bellperson's own are in each build.

use crate::prover::v0_27 as prover;
use bellperson_027 as upstream;

// The same file is this module for each release, by design.
#[cfg(not(feature = "cuda-supraseal"))]
#[allow(clippy::duplicate_mod)]
#[path = "dropin.rs"]
mod dropin;

#[cfg(feature = "cuda-supraseal")]
#[path = "dropin_supraseal.rs"]
mod dropin;

pub use dropin::{
    create_proof_batch, create_proof_batch_in_priority, create_random_proof_batch,
    create_random_proof_batch_in_priority, create_random_proof_batch_remaking,
};

// The same file for each release: recordings made ahead of time under its verifying key.
#[allow(clippy::duplicate_mod)]
#[path = "ahead.rs"]
mod ahead;

pub use ahead::save_recording;

//! The drop-ins for bellperson 0.26 (filecoin-proofs 19.0).

use crate::prover::v0_26 as prover;
use bellperson as upstream;

// The same file is this module for each release, by design.
#[allow(clippy::duplicate_mod)]
#[path = "dropin.rs"]
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

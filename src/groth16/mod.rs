//! Drop-ins for bellperson's batch provers, one module per bellperson release (each behind
//! its cargo feature), with bellperson's signatures and byte-identical proofs for the same
//! randomness.
//!
//! A fork swaps its imports of `bellperson::groth16::{create_random_proof_batch,
//! create_random_proof_batch_in_priority}` (storage-proofs-core's `CompoundProof`) for these.
//! They differ from bellperson's in two ways that matter to a prover:
//! - **Synthesis through recordings.** The first batch of a circuit structure records it
//!   while synthesizing its first member directly; once a proof made with that recording
//!   verifies against the parameters' verifying key, later batches (other partitions,
//!   later sectors of the same size, other processes through the persistent cache)
//!   synthesize by witness generation and evaluation. Recordings are keyed by a digest of
//!   the verifying key (parameters exist for exactly one structure).
//! - **Bounded memory.** At most [`in_flight`] members of a batch hold synthesized vectors
//!   at once (default 2: the next member is synthesized while one is proven), where
//!   bellperson synthesizes every member before its first FFT.
//!
//! What they promise: every proof they return verifies against the parameters whenever
//! bellperson's proof of the same circuit would, and is byte-identical to it when the
//! circuit is the parameters' one. Proofs made from a recording's vectors are verified
//! before they are returned, and one that does not verify is never returned. Members
//! synthesized directly are bellperson's vectors exactly and are not verified, as
//! bellperson does not verify its own.
//!
//! A recording can fail a member where bellperson would prove: a cache file that does not
//! describe the circuit (damaged, planted, another circuit's), one changed while mapped,
//! a trusted recording whose proof does not verify. `create_random_proof_batch_remaking`,
//! which a fork patched by `scripts/patch-fork.sh` calls, is given a way to make each
//! member's circuit again: such a member is synthesized again directly, proven and
//! verified. When that proof verifies, the recording was what failed: it is dropped, its
//! file removed (one warning naming the file and why), and the rest of the batch is
//! synthesized directly; so a batch of any size, one included, returns bellperson's
//! proofs. When it does not verify either, the member's witness or circuit is wrong
//! (bellperson would return that invalid proof): the batch fails with
//! [`crate::Error::ProofRejected`], and the recording stays. The drop-ins with
//! bellperson's signatures cannot make a circuit again, so they take no recording that
//! could fail where bellperson proves: they never read the cache's files, nor evaluate a
//! recording read in place from one (they record in memory, and save what earns trust);
//! a trusted recording in memory whose proof fails fails their batch with
//! [`crate::Error::RecordingRejected`].
//!
//! The life of a structure's recording in a process:
//!
//! ```text
//!            a batch records it, or opens its cache file
//!   absent ─────────────────────────────────────────────> on probation
//!     ^  ^                                                │   │   │
//!     │  │  it fails a member whose own proof verifies    │   │   │ cannot be recorded
//!     │  └── (file removed), or its batch fails first ────┘   │   v
//!     │                                                       │  unrecordable (direct,
//!     │                              a proof made with it     │  pre-sized)
//!     │                              verifies                 v
//!     └───── it fails a member whose own proof verifies ─ trusted (every batch evaluates it)
//! ```
//!
//! On probation, the recording serves only the batch holding it; other batches of the
//! structure wait for the verdict (a rayon worker synthesizes directly instead). A batch
//! that made its recording proves its first member before evaluating the others. A batch
//! that opened a cache file evaluates every member from it at once. Cache files are listed
//! and read without holding up batches of other structures; one that makes no progress for
//! 30 s is treated as absent. The cache directory is used only when it is this process's
//! own: owned by its user or root, writable by no one else (see [`set_cache_dir`]). In the
//! code, `store::Slot` is this state per structure (absent: no entry), `store::Start` how a
//! batch begins from it, `store::Probation` the holding batch's claim, and the pipeline's
//! `Plan`, `Made` and `Trial` follow a batch's members.
//!
//! A dedicated proving process can keep each batch's spent storage for the next with
//! [`set_retain_buffers`] or `SYNTHPOOL_RETAIN_BUFFERS=1` (off by default: it stays
//! allocated between batches).

#[macro_use]
mod signatures;

mod files;
mod key;
mod own_dir;
mod pipeline;
mod settings;
mod store;
#[cfg(feature = "bellperson-0.26")]
pub mod v0_26;
#[cfg(feature = "bellperson-0.27")]
pub mod v0_27;
mod watchdog;

pub use settings::{
    cache_dir, in_flight, retains_buffers, set_cache_dir, set_in_flight, CACHE_DIR_VARIABLE,
    CACHE_OFF, DEFAULT_CACHE_DIR, DEFAULT_IN_FLIGHT, IN_FLIGHT_VARIABLE, RETAIN_BUFFERS_VARIABLE,
};
pub use store::{clear, stats, CacheStats};

/// Whether a batch keeps its members' spent vectors (the storage of a, b, c and of the
/// input and aux values) for the next batch of the same structure, overriding the
/// `SYNTHPOOL_RETAIN_BUFFERS` environment variable. Kept vectors are written again instead
/// of fresh pages being faulted in, at the price of holding them while no batch runs: at
/// most as many members' as are in flight ([`in_flight`]), each 96 bytes per constraint of
/// the FFT domain for a, b and c and 32 per aux value. Off unless asked for; switching it
/// off frees them.
pub fn set_retain_buffers(retain: bool) {
    settings::choose_retain_buffers(retain);
    if !retain {
        store::release_kept();
    }
}

/// Logs the whole error (a `SynthesisError` keeps only its message), then converts it for
/// bellperson's signatures.
fn report(error: crate::error::Error) -> bellpepper_core::SynthesisError {
    log::error!("synthpool: {}", error.chain());
    error.into_synthesis_error()
}

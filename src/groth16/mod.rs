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
//!   the verifying key (parameters exist for exactly one structure). A recording on
//!   probation (new, or loaded from the cache directory) serves only the batch that checks
//!   it; other batches of its structure wait for the verdict (a rayon worker synthesizes
//!   directly instead). One whose proof does not verify, or whose batch fails first, is
//!   dropped with its file.
//! - **Bounded memory.** At most [`in_flight`] members of a batch hold synthesized vectors
//!   at once (default 2: the next member is synthesized while one is proven), where
//!   bellperson synthesizes every member before its first FFT.
//!
//! What they promise: every proof they return verifies against the parameters whenever
//! bellperson's proof of the same circuit would, and is byte-identical to it when the
//! circuit is the parameters' one. Proofs made from a recording's vectors are verified
//! before they are returned; one that does not verify fails its batch with
//! [`crate::Error::RecordingRejected`] and drops the recording, never returns. Members
//! synthesized directly are bellperson's vectors exactly and are not verified, as
//! bellperson does not verify its own.
//!
//! A dedicated proving process can keep each batch's spent storage for the next with
//! [`set_retain_buffers`] or `SYNTHPOOL_RETAIN_BUFFERS=1` (off by default: it stays
//! allocated between batches).

mod files;
mod pipeline;
mod settings;
mod store;

pub use settings::{
    cache_dir, in_flight, retains_buffers, set_cache_dir, set_in_flight, set_retain_buffers,
    CACHE_DIR_VARIABLE, DEFAULT_IN_FLIGHT, IN_FLIGHT_VARIABLE, RETAIN_BUFFERS_VARIABLE,
};
pub use store::{clear, stats, CacheStats};

/// Generates the drop-ins for one bellperson release.
macro_rules! dropin_for {
    ($bellperson:ident, $prover:ident) => {
        use bellpepper_core::Circuit;
        use ff::PrimeField;
        use pairing::MultiMillerLoop;
        use rand_core::RngCore;
        use $bellperson::gpu::GpuName;
        use $bellperson::groth16::{ParameterSource, Proof, VerifyingKey};
        use $bellperson::SynthesisError;

        use super::pipeline::{prove_batch, MemberProver};
        use super::settings::{in_flight, retains_buffers};
        use super::store::Key;
        use crate::prover::$prover::{random_rs, BatchProver};
        use crate::vectors::ProverVectors;
        use crate::Error;

        impl<E, P> MemberProver<E::Fr> for BatchProver<E, P>
        where
            E: MultiMillerLoop,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            P: ParameterSource<E>,
        {
            type Proof = Proof<E>;

            fn prove(
                &mut self,
                vectors: ProverVectors<E::Fr>,
                r: E::Fr,
                s: E::Fr,
                keep: bool,
            ) -> Result<(Proof<E>, Option<ProverVectors<E::Fr>>), Error> {
                BatchProver::prove(self, vectors, r, s, keep)
            }

            fn verifies(&mut self, proof: &Proof<E>, public: &[E::Fr]) -> bool {
                BatchProver::verifies(self, proof, public)
            }
        }

        /// The cache key of a verifying key: a digest of its bytes.
        fn key_of<E: MultiMillerLoop>(vk: &VerifyingKey<E>) -> Option<Key> {
            let mut bytes = Vec::new();
            vk.write(&mut bytes).ok()?;
            let mut digest = blake2s_simd::Params::new();
            digest.personal(b"synthrec");
            Some(*digest.hash(&bytes).as_array())
        }

        /// Logs the whole error (a `SynthesisError` keeps only its message), then converts.
        fn report(error: Error) -> SynthesisError {
            log::error!("synthpool: {}", error.chain());
            error.into_synthesis_error()
        }

        fn prove_cached<E, C, P>(
            circuits: Vec<C>,
            params: P,
            r: Vec<E::Fr>,
            s: Vec<E::Fr>,
            priority: bool,
        ) -> Result<Vec<Proof<E>>, SynthesisError>
        where
            E: MultiMillerLoop,
            C: Circuit<E::Fr> + Send,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            <E::Fr as PrimeField>::Repr: Sync,
            P: ParameterSource<E>,
        {
            if r.len() != circuits.len() || s.len() != circuits.len() {
                return Err(report(Error::Randomness {
                    assignments: circuits.len(),
                    r: r.len(),
                    s: s.len(),
                }));
            }
            let members = in_flight().map_err(report)?;
            let key_for = |inputs: usize| params.get_vk(inputs).ok().and_then(key_of);
            prove_batch(
                circuits,
                (&r, &s),
                &key_for,
                |first| BatchProver::new(&params, first, priority),
                (members, retains_buffers()),
            )
            .map_err(report)
        }

        /// bellperson's `groth16::create_random_proof_batch`: the same proofs for the same
        /// `rng`, synthesized through recordings, in bounded memory.
        pub fn create_random_proof_batch<E, C, R, P: ParameterSource<E>>(
            circuits: Vec<C>,
            params: P,
            rng: &mut R,
        ) -> Result<Vec<Proof<E>>, SynthesisError>
        where
            E: MultiMillerLoop,
            C: Circuit<E::Fr> + Send,
            R: RngCore,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            <E::Fr as PrimeField>::Repr: Sync,
        {
            let (r, s) = random_rs(circuits.len(), rng);
            prove_cached(circuits, params, r, s, false)
        }

        /// bellperson's `groth16::create_random_proof_batch_in_priority`: as
        /// [`create_random_proof_batch`], with GPU priority.
        pub fn create_random_proof_batch_in_priority<E, C, R, P: ParameterSource<E>>(
            circuits: Vec<C>,
            params: P,
            rng: &mut R,
        ) -> Result<Vec<Proof<E>>, SynthesisError>
        where
            E: MultiMillerLoop,
            C: Circuit<E::Fr> + Send,
            R: RngCore,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            <E::Fr as PrimeField>::Repr: Sync,
        {
            let (r, s) = random_rs(circuits.len(), rng);
            prove_cached(circuits, params, r, s, true)
        }

        /// bellperson's `groth16::create_proof_batch`: proofs with the given randomness.
        pub fn create_proof_batch<E, C, P: ParameterSource<E>>(
            circuits: Vec<C>,
            params: P,
            r: Vec<E::Fr>,
            s: Vec<E::Fr>,
        ) -> Result<Vec<Proof<E>>, SynthesisError>
        where
            E: MultiMillerLoop,
            C: Circuit<E::Fr> + Send,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            <E::Fr as PrimeField>::Repr: Sync,
        {
            prove_cached(circuits, params, r, s, false)
        }

        /// bellperson's `groth16::create_proof_batch_in_priority`.
        pub fn create_proof_batch_in_priority<E, C, P: ParameterSource<E>>(
            circuits: Vec<C>,
            params: P,
            r: Vec<E::Fr>,
            s: Vec<E::Fr>,
        ) -> Result<Vec<Proof<E>>, SynthesisError>
        where
            E: MultiMillerLoop,
            C: Circuit<E::Fr> + Send,
            E::Fr: GpuName,
            E::G1Affine: GpuName,
            E::G2Affine: GpuName,
            <E::Fr as PrimeField>::Repr: Sync,
        {
            prove_cached(circuits, params, r, s, true)
        }
    };
}

/// The drop-ins for bellperson 0.26 (filecoin-proofs 19.0).
#[cfg(feature = "bellperson-0.26")]
pub mod v0_26 {
    dropin_for!(bellperson, v0_26);
}

/// The drop-ins for bellperson 0.27 (filecoin-proofs 19.1).
#[cfg(feature = "bellperson-0.27")]
pub mod v0_27 {
    dropin_for!(bellperson_027, v0_27);
}

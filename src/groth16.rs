//! Drop-ins for bellperson's batch provers, one module per bellperson release (each behind
//! its cargo feature), with bellperson's signatures and byte-identical proofs for the same
//! randomness, that synthesize through [`crate::precompiled::cache`]: the first batch of a
//! circuit structure records it, later batches (other partitions, later sectors of the same
//! size, other processes with the persistent cache) evaluate the recording.
//!
//! A fork swaps its imports of `bellperson::groth16::{create_random_proof_batch,
//! create_random_proof_batch_in_priority}` (storage-proofs-core's `CompoundProof`) for these.
//! Recordings are keyed by a digest of the parameters' verifying key; the first proof made
//! with a new recording is verified before the recording is trusted with other batches or
//! saved. The persistent cache is the directory in `SYNTHPOOL_RECORDING_CACHE`, or the one
//! given to [`set_cache_dir`].
//!
//! A process that proves batch after batch of one structure (a dedicated proving worker)
//! can keep each batch's spent vectors for the next with [`set_retain_buffers`] or
//! `SYNTHPOOL_RETAIN_BUFFERS=1`; off by default, since they stay allocated between batches.

pub use crate::precompiled::cache::{
    cache_dir, retains_buffers, set_cache_dir, set_retain_buffers, CACHE_DIR_VARIABLE,
    RETAIN_BUFFERS_VARIABLE,
};

/// Generates the drop-ins for one bellperson release.
macro_rules! dropin_for {
    ($bellperson:ident, $prover:ident) => {
        use bellpepper_core::Circuit;
        use ff::PrimeField;
        use pairing::MultiMillerLoop;
        use rand_core::RngCore;
        use $bellperson::gpu::GpuName;
        use $bellperson::groth16::{
            prepare_verifying_key, verify_proof, ParameterSource, Proof, VerifyingKey,
        };
        use $bellperson::SynthesisError;

        use crate::precompiled::cache::{
            give_back, proof_verified, retains_buffers, synthesize_cached, Key,
        };
        use crate::prover::$prover::{prove_keeping_buffers, prove_with_priority, random_rs};
        use crate::Error;

        /// The cache key of a verifying key: a digest of its bytes.
        fn key_of<E: MultiMillerLoop>(vk: &VerifyingKey<E>) -> Option<Key> {
            let mut bytes = Vec::new();
            vk.write(&mut bytes).ok()?;
            let mut digest = blake2s_simd::Params::new();
            digest.personal(b"synthrec");
            Some(*digest.hash(&bytes).as_array())
        }

        /// Logs an error the way the caller cannot see it through `SynthesisError` (which
        /// keeps a circuit's own error as is), then converts it.
        fn report(error: Error) -> SynthesisError {
            if let Error::Member { index, .. } = &error {
                log::error!("synthpool: batch member {index} failed: {error}");
            }
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
            let key_for = |inputs: usize| params.get_vk(inputs).ok().and_then(key_of);
            let batch = synthesize_cached(circuits, &key_for).map_err(report)?;
            let Some(first) = batch.vectors.first() else {
                return Ok(Vec::new());
            };
            let public = first.input_assignment[1..].to_vec();
            let vk = params.get_vk(first.shape().inputs)?.clone();
            let unverified = batch.unverified();
            let proofs = match batch.evaluated_with.filter(|_| retains_buffers()) {
                Some(key) => {
                    let (proofs, spent) =
                        prove_keeping_buffers(params, batch.vectors, &r, &s, priority)
                            .map_err(report)?;
                    give_back::<E::Fr>(&key, spent);
                    proofs
                }
                None => {
                    prove_with_priority(params, batch.vectors, &r, &s, priority).map_err(report)?
                }
            };
            if let Some(key) = unverified {
                let verified = matches!(
                    verify_proof(&prepare_verifying_key(&vk), &proofs[0], &public),
                    Ok(true)
                );
                proof_verified::<E::Fr>(&key, verified);
            }
            Ok(proofs)
        }

        /// bellperson's `groth16::create_random_proof_batch`: the same proofs for the same
        /// `rng`, synthesized through the recording cache.
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

//! bellperson's batch provers' signatures, written once: `drop_ins!(Params)` makes them in
//! a module that has `prove_cached` for parameters of the trait `Params` (bellperson's
//! `ParameterSource`, or supraseal's parameters under `cuda-supraseal`), with the imports
//! the bodies name.

/// Makes the five drop-ins of a module from its `prove_cached`.
macro_rules! drop_ins {
    ($params:ident) => {
        /// bellperson's `groth16::create_random_proof_batch`: the same proofs for the same
        /// `rng`, synthesized through recordings made in this process, in bounded memory.
        pub fn create_random_proof_batch<E, C, R, P: $params<E>>(
            circuits: Vec<C>,
            params: P,
            rng: &mut R,
        ) -> Result<Vec<Proof<E>>, SynthesisError>
        where
            E: ProvingEngine,
            C: Circuit<E::Fr> + Send,
            R: RngCore,
        {
            let randomness = random_rs(circuits.len(), rng);
            prove_cached(circuits, None, params, randomness, false)
        }

        /// bellperson's `groth16::create_random_proof_batch_in_priority`: as
        /// [`create_random_proof_batch`], with GPU priority where the prover has one.
        pub fn create_random_proof_batch_in_priority<E, C, R, P: $params<E>>(
            circuits: Vec<C>,
            params: P,
            rng: &mut R,
        ) -> Result<Vec<Proof<E>>, SynthesisError>
        where
            E: ProvingEngine,
            C: Circuit<E::Fr> + Send,
            R: RngCore,
        {
            let randomness = random_rs(circuits.len(), rng);
            prove_cached(circuits, None, params, randomness, true)
        }

        /// bellperson's `groth16::create_proof_batch`: proofs with the given randomness.
        pub fn create_proof_batch<E, C, P: $params<E>>(
            circuits: Vec<C>,
            params: P,
            r: Vec<E::Fr>,
            s: Vec<E::Fr>,
        ) -> Result<Vec<Proof<E>>, SynthesisError>
        where
            E: ProvingEngine,
            C: Circuit<E::Fr> + Send,
        {
            prove_cached(circuits, None, params, (r, s), false)
        }

        /// bellperson's `groth16::create_proof_batch_in_priority`.
        pub fn create_proof_batch_in_priority<E, C, P: $params<E>>(
            circuits: Vec<C>,
            params: P,
            r: Vec<E::Fr>,
            s: Vec<E::Fr>,
        ) -> Result<Vec<Proof<E>>, SynthesisError>
        where
            E: ProvingEngine,
            C: Circuit<E::Fr> + Send,
        {
            prove_cached(circuits, None, params, (r, s), true)
        }

        /// What a fork's `CompoundProof::circuit_proofs` calls (`scripts/patch-fork.sh`): as
        /// [`create_random_proof_batch`] (with `priority`,
        /// [`create_random_proof_batch_in_priority`]), given `remake`, which makes member
        /// `i`'s circuit again (the fork makes a partition's from its vanilla proof). A member
        /// that a recording fails (a cache file that does not describe the circuit or changes
        /// while mapped, a trusted recording that fails a proof) is then synthesized again
        /// directly and proven, so the batch returns bellperson's proofs whatever the
        /// recording cache holds. Only batches given `remake` read the cache's files (see the
        /// [module documentation](crate::groth16)).
        pub fn create_random_proof_batch_remaking<E, C, M, F, R, P: $params<E>>(
            circuits: Vec<C>,
            remake: F,
            params: P,
            priority: bool,
            rng: &mut R,
        ) -> Result<Vec<Proof<E>>, SynthesisError>
        where
            E: ProvingEngine,
            C: Circuit<E::Fr> + Send,
            M: std::fmt::Display,
            F: Fn(usize) -> Result<C, M> + Sync,
            R: RngCore,
        {
            let randomness = random_rs(circuits.len(), rng);
            let remake = |index: usize| remake(index).map_err(|e| Error::Remake(format!("{e:#}")));
            prove_cached(circuits, Some(&remake), params, randomness, priority)
        }
    };
}

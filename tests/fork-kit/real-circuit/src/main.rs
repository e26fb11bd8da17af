//! Synthesizes one partition of a real Filecoin circuit of filecoin-proofs 19.1 and reports
//! nanoseconds per constraint, median of the repetitions, and the recording's bytes per
//! nonzero; or proves it with bellperson and with the drop-in and compares the proofs:
//!
//! `real-circuit [2KiB|8MiB|window-post|winning-post] [pce|direct|none|prove] [REPS]`
//!
//! - `2KiB`, `8MiB`: a PoRep C2 partition (storage-proofs-porep's `StackedCircuit`, two
//!   challenges as filecoin-proofs asks of those sizes), the sector sealed by the crate's
//!   own replication;
//! - `window-post`, `winning-post`: storage-proofs-post's `FallbackPoStCircuit` for 2 KiB
//!   sectors as filecoin-proofs sizes it (two sectors of ten challenges; 66 of one),
//!   over tree_r_last trees of random replicas built by storage-proofs-core;
//! - `pce`: recorded once, then per repetition the witness and the evaluation into recycled
//!   buffers (reported apart); one thread with `RAYON_NUM_THREADS=1`;
//! - `direct`: `synthpool::synthesize`;
//! - `none`: builds the circuits only, for instruction counts by difference;
//! - `prove`: random parameters for the circuit, then two members proven by bellperson's
//!   `create_random_proof_batch` and by synthpool's drop-in, cold (recording) and warm, from
//!   the same rng: every proof byte-identical to bellperson's and verified.
//!
//! Before timing, the pre-compiled vectors are checked equal to direct synthesis.

use std::time::Instant;

use bellperson::groth16;
use bellperson::Circuit;
use blstrs::{Bls12, Scalar as Fr};
use ff::Field;
use filecoin_hashers::{
    poseidon::PoseidonHasher, sha256::Sha256Hasher, Domain, HashFunction, Hasher,
};
use fr32::fr_into_bytes;
use generic_array::typenum::{U0, U8};
use rand::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use storage_proofs_core::api_version::ApiVersion;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::drgraph::BASE_DEGREE;
use storage_proofs_core::merkle::{generate_tree, DiskTree, LCTree, MerkleTreeTrait};
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_core::test_helper::setup_replica;
use storage_proofs_porep::stacked::{
    Challenges, PrivateInputs, PublicInputs, SetupParams, StackedCompound, StackedDrg,
    TemporaryAuxCache, EXP_DEGREE,
};
use storage_proofs_post::fallback::{
    FallbackPoStCompound, PrivateInputs as PostPrivate, PrivateSector, PublicInputs as PostPublic,
    PublicSector, SetupParams as PostSetup,
};
use synthpool::precompiled::{ProvingBuffers, Recording};

/// tree_c and tree_r_last of 2 KiB and 8 MiB sectors: one octal tree.
type Tree = DiskTree<PoseidonHasher, U8, U0, U0>;
type Porep<'a> = StackedDrg<'a, Tree, Sha256Hasher>;
/// A 2 KiB sector's tree_r_last as filecoin-proofs keeps it for PoSt.
type PostTree = LCTree<PoseidonHasher, U8, U0, U0>;

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let circuit = args.first().map_or("2KiB", String::as_str);
    let mode = args.get(1).map_or("pce", String::as_str);
    let reps: usize = args.get(2).map_or(Ok(3), |r| r.parse())?;
    let cache = tempfile::tempdir()?;
    let mut rng = XorShiftRng::from_seed([7; 16]);
    match circuit {
        "2KiB" => run(porep(2048 / 32, &mut rng, cache.path())?, mode, reps),
        "8MiB" => run(porep((8 << 20) / 32, &mut rng, cache.path())?, mode, reps),
        "window-post" => run(post(2, 10, &mut rng, cache.path())?, mode, reps),
        // filecoin-proofs' winning_post_setup_params: its 66 challenges of one sector become
        // 66 sectors of one challenge each in the circuit.
        "winning-post" => run(post(66, 1, &mut rng, cache.path())?, mode, reps),
        other => Err(format!(
            "circuit `{other}`: 2KiB, 8MiB, window-post or winning-post"
        )
        .into()),
    }
}

/// The circuit of one PoRep C2 partition of a sector of `nodes` nodes, sealed here, and its
/// public inputs.
fn porep(
    nodes: usize,
    rng: &mut XorShiftRng,
    dir: &std::path::Path,
) -> Result<Vec<(impl Circuit<Fr> + Clone + Send, Vec<Fr>)>, Error> {
    let replica_id = Fr::random(&mut *rng);
    let data: Vec<u8> = (0..nodes)
        .flat_map(|_| fr_into_bytes(&Fr::random(&mut *rng)))
        .collect();
    let replica_path = dir.join("replica");
    let mut replica = setup_replica(&data, &replica_path);
    let setup = SetupParams {
        nodes,
        degree: BASE_DEGREE,
        expansion_degree: EXP_DEGREE,
        porep_id: [5; 32],
        challenges: Challenges::new_interactive(2),
        num_layers: 2,
        api_version: ApiVersion::V1_2_0,
        api_features: vec![],
    };
    let params = Porep::setup(&setup)?;
    let (labels, _) = Porep::replicate_phase1(&params, &replica_id.into(), dir)?;
    let (tau, (p_aux, t_aux)) = Porep::replicate_phase2(
        &params,
        labels,
        replica.as_mut().into(),
        None,
        dir.to_path_buf(),
        replica_path.clone(),
    )?;
    drop(replica);
    let public = PublicInputs::<<PoseidonHasher as Hasher>::Domain, _> {
        replica_id: replica_id.into(),
        seed: Some(rng.gen()),
        tau: Some(tau),
        k: None,
    };
    let t_aux = TemporaryAuxCache::new(&t_aux, replica_path, false)?;
    let private = PrivateInputs { p_aux, t_aux };
    let compound = compound_proof::PublicParams {
        vanilla_params: params,
        partitions: Some(1),
        priority: false,
    };
    Ok(StackedCompound::<Tree, Sha256Hasher>::circuit_for_test_all(
        &compound, &public, &private,
    )?)
}

/// The circuit of one PoSt partition of `sectors` 2 KiB sectors of `challenges` challenges
/// each, over trees built here, and its public inputs.
fn post(
    sectors: usize,
    challenges: usize,
    rng: &mut XorShiftRng,
    dir: &std::path::Path,
) -> Result<Vec<(impl Circuit<Fr> + Clone + Send, Vec<Fr>)>, Error> {
    let leaves = 2048 / 32;
    let trees: Vec<_> = (0..sectors)
        .map(|_| generate_tree::<PostTree, _>(rng, leaves, Some(dir.to_path_buf())).1)
        .collect();
    let mut public_sectors = Vec::new();
    let mut private_sectors = Vec::new();
    for (id, tree) in trees.iter().enumerate() {
        let comm_c = <PoseidonHasher as Hasher>::Domain::random(&mut *rng);
        let comm_r_last = tree.root();
        let comm_r = <PoseidonHasher as Hasher>::Function::hash2(&comm_c, &comm_r_last);
        public_sectors.push(PublicSector {
            id: (id as u64).into(),
            comm_r,
        });
        private_sectors.push(PrivateSector {
            tree,
            comm_c,
            comm_r_last,
        });
    }
    let setup = compound_proof::SetupParams {
        vanilla_params: PostSetup {
            sector_size: (leaves * 32) as u64,
            challenge_count: challenges,
            sector_count: sectors,
            api_version: ApiVersion::V1_2_0,
        },
        partitions: Some(1),
        priority: false,
    };
    let params = FallbackPoStCompound::<PostTree>::setup(&setup)?;
    let public = PostPublic {
        randomness: <PoseidonHasher as Hasher>::Domain::random(&mut *rng),
        prover_id: <PoseidonHasher as Hasher>::Domain::random(&mut *rng),
        sectors: public_sectors,
        k: None,
    };
    let private = PostPrivate::<PostTree> {
        sectors: &private_sectors,
    };
    Ok(FallbackPoStCompound::<PostTree>::circuit_for_test_all(
        &params, &public, &private,
    )?)
}

/// Times or proves the first partition's circuit, as `mode` says.
fn run<C: Circuit<Fr> + Clone + Send>(
    partitions: Vec<(C, Vec<Fr>)>,
    mode: &str,
    reps: usize,
) -> Result<(), Error> {
    let (circuit, inputs) = partitions
        .into_iter()
        .next()
        .ok_or("no partition")?;
    let start = Instant::now();
    let recording = Recording::<Fr>::record(circuit.clone())?;
    let constraints = recording.shape().constraints;
    let record_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut buffers = ProvingBuffers::default();
    let direct = synthpool::synthesize(circuit.clone())?;
    if *buffers.synthesize(&recording, circuit.clone())? != direct {
        return Err("pre-compiled vectors differ from direct synthesis".into());
    }
    drop(direct);
    if mode == "prove" {
        return prove(circuit, &inputs);
    }

    let per_constraint =
        |from: Instant, to: Instant| (to - from).as_nanos() as f64 / constraints as f64;
    let (mut total, mut witness, mut evaluation) = (vec![], vec![], vec![]);
    for circuit in vec![circuit; reps] {
        let t0 = Instant::now();
        match mode {
            "pce" => {
                let w = buffers.witness(&recording, circuit)?;
                let t1 = Instant::now();
                buffers.evaluate(&recording, w)?;
                witness.push(per_constraint(t0, t1));
                evaluation.push(per_constraint(t1, Instant::now()));
            }
            "direct" => drop(synthpool::synthesize(circuit)?),
            "none" => {}
            other => return Err(format!("mode `{other}`: pce, direct, none or prove").into()),
        }
        total.push(per_constraint(t0, Instant::now()));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let split = if mode == "pce" {
        format!(
            " (witness {:.1}, evaluation {:.1})",
            median(witness),
            median(evaluation)
        )
    } else {
        String::new()
    };
    println!(
        "{constraints} constraints, record {record_ms:.0} ms, recording {:.2} bytes per nonzero \
         ({} nonzeros), {mode}: {:.1} ns per constraint{split}",
        recording.bytes_per_nonzero(),
        recording.nonzeros(),
        median(total),
    );
    Ok(())
}

/// Two members of `circuit` proven by bellperson and by the drop-in (cold, then warm) from
/// the same rng: the proofs byte-identical and verified against `inputs`.
fn prove<C: Circuit<Fr> + Clone + Send>(circuit: C, inputs: &[Fr]) -> Result<(), Error> {
    let mut rng = XorShiftRng::from_seed([9; 16]);
    let start = Instant::now();
    let params = groth16::generate_random_parameters::<Bls12, _, _>(circuit.clone(), &mut rng)?;
    println!("parameters: {:.1} s", start.elapsed().as_secs_f64());
    let pvk = groth16::prepare_verifying_key(&params.vk);
    let bytes = |proofs: &[groth16::Proof<Bls12>]| -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        for proof in proofs {
            proof.write(&mut out)?;
        }
        Ok(out)
    };
    let members = || vec![circuit.clone(); 2];
    let theirs = groth16::create_random_proof_batch(
        members(),
        &params,
        &mut XorShiftRng::from_seed([3; 16]),
    )?;
    for proof in &theirs {
        if !groth16::verify_proof(&pvk, proof, inputs)? {
            return Err("bellperson's proof does not verify".into());
        }
    }
    let theirs = bytes(&theirs)?;
    for batch in ["cold", "warm"] {
        let start = Instant::now();
        let ours = synthpool::groth16::v0_27::create_random_proof_batch(
            members(),
            &params,
            &mut XorShiftRng::from_seed([3; 16]),
        )?;
        // Byte-identical to bellperson's verified proofs, so verified too.
        if bytes(&ours)? != theirs {
            return Err(format!("the drop-in's {batch} proofs differ from bellperson's").into());
        }
        println!(
            "drop-in, {batch}: 2 proofs byte-identical to bellperson's, verified, {:.1} s",
            start.elapsed().as_secs_f64()
        );
    }
    let stats = synthpool::groth16::stats::<Fr>();
    println!(
        "drop-in store: recorded {}, trusted {}, evaluated batches {}",
        stats.recorded, stats.trusted, stats.evaluated_batches
    );
    Ok(())
}

//! The real circuits of filecoin-proofs 19.1, built from sectors sealed, trees built and
//! sectors updated here by the crates' own code, as filecoin-proofs sizes them at 2 KiB
//! (and 8 MiB for PoRep).

use std::path::{Path, PathBuf};

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::Field;
use filecoin_hashers::{
    poseidon::PoseidonHasher, sha256::Sha256Hasher, Domain, HashFunction, Hasher,
};
use fr32::fr_into_bytes;
use generic_array::typenum::{U0, U8};
use merkletree::merkle::get_merkle_tree_len;
use merkletree::store::StoreConfig;
use rand::Rng;
use rand_xorshift::XorShiftRng;
use storage_proofs_core::api_version::ApiVersion;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::drgraph::BASE_DEGREE;
use storage_proofs_core::merkle::{generate_tree, DiskTree, LCTree};
use storage_proofs_core::proof::ProofScheme;
use storage_proofs_core::test_helper::setup_replica;
use storage_proofs_core::util::default_rows_to_discard;
use storage_proofs_porep::stacked::{
    Challenges, PersistentAux, PrivateInputs, PublicInputs, SetupParams, StackedCompound,
    StackedDrg, Tau, TemporaryAux, TemporaryAuxCache, EXP_DEGREE,
};
use storage_proofs_post::fallback::{
    FallbackPoStCompound, PrivateInputs as PostPrivate, PrivateSector, PublicInputs as PostPublic,
    PublicSector, SetupParams as PostSetup,
};
use storage_proofs_update::circuit::PrivateInputs as UpdateCircuitPrivate;
use storage_proofs_update::constants::{h_default, partition_count};
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound,
    PrivateInputs as UpdatePrivate, PublicInputs as UpdatePublic, SetupParams as UpdateSetup,
};

use crate::Error;

/// tree_c and tree_r_last of 2 KiB and 8 MiB sectors: one octal tree.
type Tree = DiskTree<PoseidonHasher, U8, U0, U0>;
type Porep<'a> = StackedDrg<'a, Tree, Sha256Hasher>;
/// A 2 KiB sector's tree_r_last as filecoin-proofs keeps it for PoSt and for the update.
type TreeR = LCTree<PoseidonHasher, U8, U0, U0>;
type PoseidonDomain = <PoseidonHasher as Hasher>::Domain;

/// Partitions of a circuit with their public inputs.
pub type Partitions<C> = Vec<(C, Vec<Fr>)>;

/// A sector sealed by storage-proofs-porep's replication: everything its C2 and an update
/// need.
struct Sealed {
    params: <Porep<'static> as ProofScheme<'static>>::PublicParams,
    replica_id: Fr,
    replica: PathBuf,
    tau: Tau<PoseidonDomain, <Sha256Hasher as Hasher>::Domain>,
    p_aux: PersistentAux<PoseidonDomain>,
    t_aux: TemporaryAux<Tree, Sha256Hasher>,
}

/// Seals `data` (whole field elements, 32 bytes per node) in `dir` with two layers, as
/// storage-proofs-porep's own tests do for small sectors.
fn seal(data: &[u8], rng: &mut XorShiftRng, dir: &Path) -> Result<Sealed, Error> {
    let nodes = data.len() / 32;
    let replica_id = Fr::random(&mut *rng);
    let replica = dir.join("replica");
    let mut mapped = setup_replica(data, &replica);
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
        mapped.as_mut().into(),
        None,
        dir.to_path_buf(),
        replica.clone(),
    )?;
    Ok(Sealed {
        params,
        replica_id,
        replica,
        tau,
        p_aux,
        t_aux,
    })
}

/// Random field elements, 32 bytes each: a sector's worth of data.
fn random_data(nodes: usize, rng: &mut XorShiftRng) -> Vec<u8> {
    (0..nodes)
        .flat_map(|_| fr_into_bytes(&Fr::random(&mut *rng)))
        .collect()
}

/// The circuit of one PoRep C2 partition of a sector of `nodes` nodes of random data, sealed
/// here (two challenges, as filecoin-proofs asks of 2 KiB and 8 MiB).
pub fn porep(
    nodes: usize,
    rng: &mut XorShiftRng,
    dir: &Path,
) -> Result<Partitions<impl Circuit<Fr> + Clone + Send + Sync>, Error> {
    let data = random_data(nodes, rng);
    let sealed = seal(&data, rng, dir)?;
    let public = PublicInputs::<PoseidonDomain, _> {
        replica_id: sealed.replica_id.into(),
        seed: Some(rng.gen()),
        tau: Some(sealed.tau),
        k: None,
    };
    let t_aux = TemporaryAuxCache::new(&sealed.t_aux, sealed.replica, false)?;
    let private = PrivateInputs {
        p_aux: sealed.p_aux,
        t_aux,
    };
    let compound = compound_proof::PublicParams {
        vanilla_params: sealed.params,
        partitions: Some(1),
        priority: false,
    };
    Ok(StackedCompound::<Tree, Sha256Hasher>::circuit_for_test_all(
        &compound, &public, &private,
    )?)
}

/// The circuit of one PoSt partition of `sectors` 2 KiB sectors of `challenges` challenges
/// each, over tree_r_last trees of random replicas built by storage-proofs-core (a PoSt reads
/// nothing of a sealed sector but its tree_r_last and comm_c).
pub fn post(
    sectors: usize,
    challenges: usize,
    rng: &mut XorShiftRng,
    dir: &Path,
) -> Result<Partitions<impl Circuit<Fr> + Clone + Send + Sync>, Error> {
    let leaves = 2048 / 32;
    let trees: Vec<_> = (0..sectors)
        .map(|_| generate_tree::<TreeR, _>(rng, leaves, Some(dir.to_path_buf())).1)
        .collect();
    let mut public_sectors = Vec::new();
    let mut private_sectors = Vec::new();
    for (id, tree) in trees.iter().enumerate() {
        let comm_c = PoseidonDomain::random(&mut *rng);
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
    let params = FallbackPoStCompound::<TreeR>::setup(&setup)?;
    let public = PostPublic {
        randomness: PoseidonDomain::random(&mut *rng),
        prover_id: PoseidonDomain::random(&mut *rng),
        sectors: public_sectors,
        k: None,
    };
    let private = PostPrivate::<TreeR> {
        sectors: &private_sectors,
    };
    Ok(FallbackPoStCompound::<TreeR>::circuit_for_test_all(
        &params, &public, &private,
    )?)
}

/// The empty-sector update (SnapDeals) circuit of a 2 KiB sector: a committed-capacity sector
/// sealed here (all zeros), random data encoded into it by storage-proofs-update's
/// `encode_into` (what filecoin-proofs' `encode_into` calls), with filecoin-proofs' default
/// `h`.
pub fn update(rng: &mut XorShiftRng, dir: &Path) -> Result<Partitions<Update>, Error> {
    let nodes = 2048 / 32;
    let sealed = seal(&vec![0; nodes * 32], rng, dir)?;
    let new = dir.join("update");
    std::fs::create_dir_all(&new)?;
    let staged = new.join("staged");
    std::fs::write(&staged, random_data(nodes, rng))?;
    let replica = new.join("replica");
    std::fs::write(&replica, vec![0; nodes * 32])?;
    let config = |path: &Path, id: &str, arity: usize| -> Result<StoreConfig, Error> {
        Ok(StoreConfig {
            path: path.to_path_buf(),
            id: id.to_string(),
            size: Some(get_merkle_tree_len(nodes, arity)?),
            rows_to_discard: default_rows_to_discard(nodes, arity),
        })
    };
    let tree_d_new = config(&new, "tree-d", 2)?;
    let tree_r_new = config(&new, "tree-r-last", 8)?;
    let mut tree_r_old = sealed.t_aux.tree_r_last_config.clone();
    tree_r_old.size = Some(get_merkle_tree_len(nodes, 8)?);
    let h = h_default(nodes);
    let (comm_r_new, _, comm_d_new) = EmptySectorUpdate::<TreeR>::encode_into(
        nodes,
        tree_d_new.clone(),
        tree_r_new.clone(),
        sealed.p_aux.comm_c,
        sealed.p_aux.comm_r_last,
        &replica,
        &sealed.replica,
        &staged,
        h,
    )?;
    let setup = compound_proof::SetupParams {
        vanilla_params: UpdateSetup {
            sector_bytes: (nodes * 32) as u64,
        },
        partitions: Some(partition_count(nodes)),
        priority: false,
    };
    let params = EmptySectorUpdateCompound::<TreeR>::setup(&setup)?;
    let public = UpdatePublic {
        k: 0,
        comm_r_old: sealed.tau.comm_r,
        comm_d_new,
        comm_r_new,
        h,
    };
    let private = UpdatePrivate {
        comm_c: sealed.p_aux.comm_c,
        tree_r_old_config: tree_r_old,
        old_replica_path: sealed.replica,
        tree_d_new_config: tree_d_new,
        tree_r_new_config: tree_r_new,
        replica_path: replica,
    };
    Ok(
        EmptySectorUpdateCompound::<TreeR>::circuit_for_test_all(&params, &public, &private)?
            .into_iter()
            .map(|(circuit, inputs)| (Update(circuit), inputs))
            .collect(),
    )
}

/// The update's circuit, cloned field by field: the crate's derived `Clone` of its private
/// inputs asks the tree type to be `Clone`, which no tree is, and the tool synthesizes each
/// circuit several times.
pub struct Update(EmptySectorUpdateCircuit<TreeR>);

impl Clone for Update {
    fn clone(&self) -> Self {
        let private = &self.0.priv_inputs;
        Update(EmptySectorUpdateCircuit {
            pub_params: self.0.pub_params.clone(),
            pub_inputs: self.0.pub_inputs.clone(),
            priv_inputs: UpdateCircuitPrivate {
                comm_c: private.comm_c,
                root_r_old: private.root_r_old,
                root_r_new: private.root_r_new,
                apex_leafs: private.apex_leafs.clone(),
                challenge_proofs: private.challenge_proofs.clone(),
            },
        })
    }
}

impl Circuit<Fr> for Update {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        self.0.synthesize(cs)
    }
}

//! `synthpool-record`: makes the recordings of filecoin-proofs 19.1's circuits ahead of
//! time, so that no proof pays for recording, in a process of its own or not.
//!
//! ```text
//! synthpool-record [--generate-test-parameters] PROOF...
//! ```
//!
//! Each PROOF is a registered proof of filecoin-proofs-api 19.1, as filecoin-ffi names it:
//! a PoRep (`StackedDrg32GiBV1_1`, `StackedDrg32GiBV1_1_Feat_SyntheticPoRep`, ...: its C2
//! partition), a PoSt (`StackedDrgWindow32GiBV1_2`, `StackedDrgWinning32GiBV1`, ...) or,
//! prefixed with `update:`, an empty-sector update (`update:StackedDrg32GiBV1`, SnapDeals).
//! For each, the circuit's blank form (as parameter generation builds it) is recorded and
//! saved in the recording cache (`SYNTHPOOL_RECORDING_CACHE`, by default
//! `/var/tmp/synthpool-recordings`) under the verifying key that the parameter cache
//! (`FIL_PROOFS_PARAMETER_CACHE`, by default `/var/tmp/filecoin-proof-parameters`, where
//! paramfetch puts it) holds for that proof: the file the drop-ins look for. Nothing is
//! trusted for having been made here: a process that opens the file verifies the first
//! proof made from it, and every later one.
//!
//! A missing verifying key is an error naming its file (fetch the parameters first);
//! `--generate-test-parameters` generates the parameters of the test sizes (2 KiB, 8 MiB)
//! instead, as filecoin-proofs does for its tests.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use bellperson::groth16::VerifyingKey;
use blstrs::{Bls12, Scalar as Fr};
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::parameters::{
    public_params, window_post_public_params, winning_post_public_params,
};
use filecoin_proofs::types::{MerkleTreeTrait, PoRepConfig, PoStConfig, PoStType};
use filecoin_proofs::with_shape;
use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};
use rand::rngs::OsRng;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_porep::stacked::StackedCompound;
use storage_proofs_post::fallback::FallbackPoStCompound;
use storage_proofs_update::constants::TreeRHasher;
use storage_proofs_update::{EmptySectorUpdateCompound, PublicParams as UpdatePublicParams};

/// A proof whose circuit to record.
#[derive(Clone, Copy, Debug)]
enum Proof {
    Seal(RegisteredSealProof),
    PoSt(RegisteredPoStProof),
    Update(RegisteredUpdateProof),
}

impl Proof {
    /// A registered proof's name, as filecoin-proofs-api spells it (`update:` before an
    /// update proof's).
    fn parse(name: &str) -> Result<Self> {
        let quoted = |name: &str| format!("\"{name}\"");
        if let Some(update) = name.strip_prefix("update:") {
            return serde_json::from_str(&quoted(update))
                .map(Proof::Update)
                .with_context(|| {
                    format!("`{update}` is not an update proof of filecoin-proofs-api 19.1")
                });
        }
        if let Ok(seal) = serde_json::from_str(&quoted(name)) {
            return Ok(Proof::Seal(seal));
        }
        serde_json::from_str(&quoted(name))
            .map(Proof::PoSt)
            .with_context(|| {
                format!("`{name}` is neither a seal nor a PoSt proof of filecoin-proofs-api 19.1")
            })
    }

    fn sector_size(self) -> u64 {
        match self {
            Proof::Seal(proof) => u64::from(proof.sector_size()),
            Proof::PoSt(proof) => u64::from(proof.sector_size()),
            Proof::Update(proof) => u64::from(proof.sector_size()),
        }
    }

    /// Where the parameter cache holds the proof's verifying key.
    fn verifying_key_path(self) -> Result<PathBuf> {
        match self {
            Proof::Seal(proof) => proof.cache_verifying_key_path(),
            Proof::PoSt(proof) => proof.cache_verifying_key_path(),
            Proof::Update(proof) => proof.cache_verifying_key_path(),
        }
    }
}

/// What a proof's circuit is recorded with: its verifying key, read from the parameter
/// cache (or generated there for a test size), and the blank circuit.
struct Target<C> {
    vk: VerifyingKey<Bls12>,
    circuit: C,
}

/// The parameters' verifying key: read from the cache, or, with `generate`, generated
/// there when missing.
fn verifying_key(
    read: impl FnOnce(Option<&mut OsRng>) -> Result<VerifyingKey<Bls12>>,
    generate: bool,
) -> Result<VerifyingKey<Bls12>> {
    read(generate.then_some(&mut OsRng))
}

fn porep<Tree: 'static + MerkleTreeTrait>(
    config: PoRepConfig,
    generate: bool,
    dir: &Path,
) -> Result<PathBuf> {
    let params = public_params::<Tree>(&config)?;
    type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;
    let target = Target {
        vk: verifying_key(
            |rng| Compound::<Tree>::verifying_key(rng, &params),
            generate,
        )?,
        circuit: Compound::<Tree>::blank_circuit(&params),
    };
    save(target, dir)
}

fn post<Tree: 'static + MerkleTreeTrait>(
    config: PoStConfig,
    generate: bool,
    dir: &Path,
) -> Result<PathBuf> {
    let params = match config.typ {
        PoStType::Winning => winning_post_public_params::<Tree>(&config)?,
        PoStType::Window => window_post_public_params::<Tree>(&config)?,
    };
    let target = Target {
        vk: verifying_key(
            |rng| FallbackPoStCompound::<Tree>::verifying_key(rng, &params),
            generate,
        )?,
        circuit: FallbackPoStCompound::<Tree>::blank_circuit(&params),
    };
    save(target, dir)
}

fn update<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    sector_size: u64,
    generate: bool,
    dir: &Path,
) -> Result<PathBuf> {
    let params = UpdatePublicParams::from_sector_size(sector_size);
    let target = Target {
        vk: verifying_key(
            |rng| EmptySectorUpdateCompound::<Tree>::verifying_key(rng, &params),
            generate,
        )?,
        circuit: EmptySectorUpdateCompound::<Tree>::blank_circuit(&params),
    };
    save(target, dir)
}

fn save<C: bellperson::Circuit<Fr>>(target: Target<C>, dir: &Path) -> Result<PathBuf> {
    Ok(synthpool::groth16::v0_27::save_recording(
        target.circuit,
        &target.vk,
        dir,
    )?)
}

/// Records `proof`'s circuit into `dir`: the file's path.
fn record(proof: Proof, generate: bool, dir: &Path) -> Result<PathBuf> {
    let size = proof.sector_size();
    if generate && size > 8 << 20 {
        bail!("--generate-test-parameters makes the parameters of test sizes only (2 KiB, 8 MiB)");
    }
    let recorded = match proof {
        Proof::Seal(seal) => with_shape!(size, porep, seal.as_v1_config(), generate, dir),
        Proof::PoSt(post_proof) => {
            with_shape!(size, post, post_proof.as_v1_config(), generate, dir)
        }
        Proof::Update(_) => with_shape!(size, update, size, generate, dir),
    };
    recorded.with_context(|| {
        let vk = proof
            .verifying_key_path()
            .map_or_else(|e| e.to_string(), |path| path.display().to_string());
        format!("recording {proof:?} (its verifying key: {vk})")
    })
}

fn main() -> Result<()> {
    let mut generate = false;
    let mut proofs = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--generate-test-parameters" => generate = true,
            "-h" | "--help" => {
                println!("synthpool-record [--generate-test-parameters] PROOF... (see the README)");
                return Ok(());
            }
            name => proofs.push(Proof::parse(name)?),
        }
    }
    if proofs.is_empty() {
        bail!("name the proofs to record, e.g. StackedDrg32GiBV1_1 StackedDrgWindow32GiBV1_2");
    }
    let dir = synthpool::groth16::cache_dir().context(
        "the recording cache is off (SYNTHPOOL_RECORDING_CACHE=off): nowhere to save recordings",
    )?;
    for proof in proofs {
        let started = Instant::now();
        let path = record(proof, generate, &dir)?;
        let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
        println!(
            "{proof:?}: {} ({bytes} bytes) in {:.1} s",
            path.display(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

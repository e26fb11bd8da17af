//! Writes a SnarkPack SRS generated on this machine, for the tests of filecoin-proofs and
//! filecoin-ffi that aggregate proofs (non-interactive PoRep's C2,
//! `aggregate_seal_commit_proofs`) where the trusted setup's
//! `v28-fil-inner-product-v1.srs`, which only paramfetch brings, is absent:
//!
//! `test-srs PATH [PROOFS]`
//!
//! Its secrets are this process's random numbers, so an aggregate made with it convinces
//! no one who holds the real file: a chain rejects it. Write it only into a parameter cache
//! kept for tests; filecoin-proofs run with `FIL_PROOFS_VERIFY_PRODUCTION_PARAMS=1` refuses
//! it. An existing file is never replaced. Before it reports success the tool reads the
//! file back and checks that it holds what was written: the 2 x `PROOFS` powers an
//! aggregation of `PROOFS` proofs needs (a power of two, 1024 unless given; at most
//! 16,384).

use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, ErrorKind};
use std::path::Path;

use bellperson::groth16::aggregate::{setup_fake_srs, GenericSRS};
use blstrs::Bls12;
use rand::rngs::OsRng;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The most proofs an aggregation can take from the file: filecoin-proofs reads at most
/// 32,769 powers of it (storage-proofs-core's `read_cached_srs_key`), and an aggregation of
/// n proofs needs 2n.
const MAX_PROOFS: usize = 16_384;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, proofs): (&String, usize) = match args.as_slice() {
        [path] => (path, 1024),
        [path, proofs] => (
            path,
            proofs
                .parse()
                .map_err(|_| format!("PROOFS: not a number: {proofs}"))?,
        ),
        _ => return Err("usage: test-srs PATH [PROOFS]".into()),
    };
    if !proofs.is_power_of_two() || !(2..=MAX_PROOFS).contains(&proofs) {
        return Err(
            format!("PROOFS must be a power of two from 2 to {MAX_PROOFS}, not {proofs}").into(),
        );
    }
    let path = Path::new(path);
    let srs = setup_fake_srs::<Bls12, _>(&mut OsRng, proofs);
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            ErrorKind::AlreadyExists => {
                format!("{}: exists, and is never replaced", path.display())
            }
            _ => format!("{}: {e}", path.display()),
        })?;
    // A file cut short would pass for an SRS until filecoin-proofs reads past its end.
    if let Err(e) = write_and_check(file, path, &srs, proofs) {
        std::fs::remove_file(path)?;
        return Err(e);
    }
    println!(
        "{}: a test-only SRS for aggregations of up to {proofs} proofs (not the trusted setup's)",
        path.display()
    );
    Ok(())
}

/// Writes `srs` to `file`, created at `path`, then reads it back and checks that it holds
/// `srs`, with the powers an aggregation of `proofs` proofs needs.
fn write_and_check(
    file: File,
    path: &Path,
    srs: &GenericSRS<Bls12>,
    proofs: usize,
) -> Result<(), Error> {
    let mut writer = BufWriter::new(file);
    srs.write(&mut writer)?;
    writer
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()?;
    let read = GenericSRS::<Bls12>::read(&mut BufReader::new(File::open(path)?))?;
    let same = read.g_alpha_powers == srs.g_alpha_powers
        && read.g_beta_powers == srs.g_beta_powers
        && read.h_alpha_powers == srs.h_alpha_powers
        && read.h_beta_powers == srs.h_beta_powers;
    if !same || read.g_alpha_powers.len() < 2 * proofs {
        return Err(format!("{}: read back, it is not the SRS written", path.display()).into());
    }
    Ok(())
}

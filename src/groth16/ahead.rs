//! Recordings made ahead of time, so that no production proof pays for recording: a
//! circuit's structure recorded from its blank form (no witness, as for parameter
//! generation) and saved in the recording cache under its parameters' verifying key, where
//! the drop-ins look. Such a file is not trusted for being there: like any cache file, the
//! first proof a batch makes from it is verified, and every proof after. Compiled once per
//! bellperson release (`v0_26.rs`, `v0_27.rs` mount it), whose verifying key it takes.

use std::path::{Path, PathBuf};

use bellpepper_core::Circuit;
use ff::PrimeField;

use pairing::MultiMillerLoop;

use super::upstream::groth16::VerifyingKey;
use crate::error::Error;
use crate::groth16::files::file_name;
use crate::groth16::key::{key_of, Key};
use crate::groth16::own_dir::own_dir;
use crate::precompiled::Recording;

/// Records `circuit`'s structure (its blank form will do: no witness is computed) and saves
/// it in the recording cache `dir` under the verifying key `vk`, where a drop-in proving
/// with parameters of that key finds it instead of recording the structure itself; returns
/// the file's path. The file earns trust as any cache file does: the first proof made from
/// it in a process is verified, and so is every proof after it. An error when the circuit
/// does not have the key's number of public inputs, when `dir` is not this process's own
/// (another user's, or writable by others; made with mode 0755 where missing), or when the
/// file cannot be written.
pub fn save_recording<E, C>(circuit: C, vk: &VerifyingKey<E>, dir: &Path) -> Result<PathBuf, Error>
where
    E: MultiMillerLoop,
    C: Circuit<E::Fr>,
{
    save::<E::Fr, C>(circuit, key_of(|bytes| vk.write(bytes)), vk.ic.len(), dir)
}

/// Records `circuit` and saves it in `dir` as the cache file of `key`, for parameters whose
/// verifying key has `inputs` public inputs (the constant one included); the file's path.
fn save<Scalar: PrimeField, C: Circuit<Scalar>>(
    circuit: C,
    key: Option<Key>,
    inputs: usize,
    dir: &Path,
) -> Result<PathBuf, Error> {
    let key = key.ok_or_else(|| {
        Error::InvalidRecording("the verifying key cannot be serialized to name it".into())
    })?;
    let recording = Recording::record(circuit)?;
    if recording.shape().inputs != inputs {
        return Err(Error::InvalidRecording(format!(
            "the circuit has {} inputs, its verifying key {inputs}: not the key's circuit",
            recording.shape().inputs
        )));
    }
    own_dir(dir)?;
    let path = dir.join(file_name(inputs, &key));
    recording.save_keyed(&path, &key)?;
    Ok(path)
}

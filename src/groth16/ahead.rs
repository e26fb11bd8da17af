//! Recordings made ahead of time, so that no production proof pays for recording: a
//! circuit's structure recorded from its blank form (no witness, as for parameter
//! generation) and saved in the recording cache under its parameters' verifying key, where
//! the drop-ins look. Such a file is not trusted for being there: like any cache file, the
//! first proof a batch makes from it is verified, and every proof after.

use std::path::{Path, PathBuf};

use bellpepper_core::Circuit;
use ff::PrimeField;

use super::files::file_name;
use super::key::Key;
use crate::error::{Error, FileProblem};
use crate::precompiled::Recording;

/// Records `circuit` and saves it in `dir` as the cache file of `key`, for parameters whose
/// verifying key has `inputs` public inputs (the constant one included); the file's path.
pub(crate) fn save_recording<Scalar: PrimeField, C: Circuit<Scalar>>(
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
    std::fs::create_dir_all(dir).map_err(|e| Error::file(dir, FileProblem::Io(e)))?;
    let path = dir.join(file_name(inputs, &key));
    recording.save_keyed(&path, &key)?;
    Ok(path)
}

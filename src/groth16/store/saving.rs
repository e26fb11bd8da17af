//! A trusted recording written to the cache directory once its batch has succeeded, and
//! filed with the file written, so that a later rejection removes that file and no other.

use std::path::PathBuf;
use std::sync::Arc;

use ff::PrimeField;

use super::{lock, Slot, Store};
use crate::groth16::files;
use crate::groth16::key::Key;
use crate::precompiled::Recording;

/// A trusted recording to write to the cache directory.
pub(crate) struct Saving<Scalar: PrimeField> {
    pub(super) store: Arc<Store<Scalar>>,
    pub(super) dir: PathBuf,
    pub(super) inputs: usize,
    pub(super) key: Key,
    pub(super) recording: Arc<Recording<Scalar>>,
}

impl<Scalar: PrimeField> Saving<Scalar> {
    /// Writes the file (a failure is logged, never the batch's error), and files it with
    /// the recording, so that a later rejection removes that file and no other.
    pub(crate) fn save(self) {
        let Some(saved) = files::save(&self.dir, self.inputs, &self.key, &self.recording) else {
            return;
        };
        let mut state = lock(&self.store.state);
        state.stats.saved += 1;
        if let Some((_, Slot::Trusted(recording, file @ None))) = state.entries.get_mut(&self.key) {
            if Arc::ptr_eq(recording, &self.recording) {
                *file = Some(saved);
            }
        }
    }
}

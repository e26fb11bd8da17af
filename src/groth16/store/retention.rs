//! The storage a batch keeps for the next batch of its structure, while retention is on.

use ff::PrimeField;

use super::{lock, Store};
use crate::groth16::key::Key;
use crate::groth16::settings::retains_buffers;
use crate::vectors::ProverVectors;

impl<Scalar: PrimeField> Store<Scalar> {
    /// Up to `count` kept sets of storage for the structure `key`.
    pub(crate) fn take_kept(&self, key: &Key, count: usize) -> Vec<ProverVectors<Scalar>> {
        let mut state = lock(&self.state);
        let Some((held, kept)) = &mut state.kept else {
            return Vec::new();
        };
        if held != key {
            return Vec::new();
        }
        let taken = kept.split_off(kept.len().saturating_sub(count));
        state.stats.reused_buffers += taken.len() as u64;
        taken
    }

    /// Counts one member's storage handed back within its batch.
    pub(crate) fn count_handed_back(&self) {
        lock(&self.state).stats.handed_back += 1;
    }

    /// Keeps a batch's spent storage for the next batch of `key` while retention is on:
    /// one structure's at a time (another's replace it), at most `limit` sets.
    pub(crate) fn keep(&self, key: &Key, mut spent: Vec<ProverVectors<Scalar>>, limit: usize) {
        if !retains_buffers() {
            return;
        }
        let replaced = {
            let mut state = lock(&self.state);
            match &mut state.kept {
                Some((held, kept)) if held == key => {
                    kept.append(&mut spent);
                    let over = kept.len().saturating_sub(limit);
                    Some(kept.drain(..over).collect::<Vec<_>>())
                }
                slot => {
                    spent.truncate(limit);
                    slot.replace((*key, spent)).map(|(_, old)| old)
                }
            }
        };
        // Freed outside the lock: returning gigabytes to the system takes a while.
        drop(replaced);
    }
}

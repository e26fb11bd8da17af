//! A batch's hold on a structure whose recording is on probation: the one batch that uses
//! the recording until a proof made with it is judged, and what the verdict does to the
//! store (and to the file the recording came from).

use std::sync::Arc;

use ff::PrimeField;

use super::{lock, Saving, Slot, Store};
use crate::groth16::files::{self, CacheFile};
use crate::groth16::key::Key;
use crate::precompiled::Recording;
use crate::shape::Shape;
use crate::warn_once::warn_once;

/// Where a hold stands.
enum Hold {
    /// Recording a structure whose key is not known until its first member is synthesized:
    /// the store's one claim on such a recording (other structures wait for it to be
    /// known).
    Unknown,
    /// On probation under `key`, for circuits of `inputs` inputs; `file` is the cache file
    /// the recording was opened from, once it was.
    Known {
        key: Key,
        inputs: usize,
        file: Option<CacheFile>,
    },
    /// Judged, or given back: nothing is left to release.
    Released,
}

/// A batch's hold on a structure whose recording is on probation; dropped before a
/// verdict (the batch failed first), it drops the recording unjudged.
pub(crate) struct Probation<Scalar: PrimeField> {
    store: Arc<Store<Scalar>>,
    hold: Hold,
}

impl<Scalar: PrimeField> Probation<Scalar> {
    /// The claim on recording a structure not known yet (the store has marked it).
    pub(super) fn unknown(store: Arc<Store<Scalar>>) -> Self {
        Probation {
            store,
            hold: Hold::Unknown,
        }
    }

    /// The hold on the structure `key` of `inputs` inputs (the store has filed it on
    /// probation).
    pub(super) fn known(store: Arc<Store<Scalar>>, key: Key, inputs: usize) -> Self {
        Probation {
            store,
            hold: Hold::Known {
                key,
                inputs,
                file: None,
            },
        }
    }

    /// The structure and its input count, once known.
    pub(super) fn structure(&self) -> Option<(Key, usize)> {
        match &self.hold {
            Hold::Known { key, inputs, .. } => Some((*key, *inputs)),
            Hold::Unknown | Hold::Released => None,
        }
    }

    /// The recording came from `file`.
    pub(super) fn opened(&mut self, opened: CacheFile) {
        if let Hold::Known { file, .. } = &mut self.hold {
            *file = Some(opened);
        }
    }

    /// The file the recording came from, if it did.
    fn file(&self) -> Option<&CacheFile> {
        match &self.hold {
            Hold::Known { file, .. } => file.as_ref(),
            Hold::Unknown | Hold::Released => None,
        }
    }

    /// The structure is `key` (known now that the first member is): other batches of it
    /// wait for this one's verdict; other structures may record again.
    pub(crate) fn register(&mut self, key: Key, inputs: usize) {
        let mut state = lock(&self.store.state);
        state.entries.insert(key, (inputs, Slot::Probation));
        state.stats.recorded += 1;
        if let Hold::Unknown = self.hold {
            state.recording_unknown = false;
        }
        self.hold = Hold::Known {
            key,
            inputs,
            file: None,
        };
        drop(state);
        self.store.changed.notify_all();
    }

    /// The structure, once known.
    pub(crate) fn key(&self) -> Option<Key> {
        self.structure().map(|(key, _)| key)
    }

    /// The recording earned trust: it serves every batch from now on, and is written to
    /// the cache directory if it did not come from there. Returns what to save, if
    /// anything (saving waits for the batch's end).
    pub(crate) fn trust(mut self, recording: &Arc<Recording<Scalar>>) -> Option<Saving<Scalar>> {
        let Hold::Known { key, inputs, file } = std::mem::replace(&mut self.hold, Hold::Released)
        else {
            self.release();
            return None;
        };
        let came_from_file = file.is_some();
        {
            let mut state = lock(&self.store.state);
            let slot = Slot::Trusted(Arc::clone(recording), file);
            state.entries.insert(key, (inputs, slot));
            state.stats.trusted += 1;
        }
        self.store.changed.notify_all();
        let dir = (self.store.disk.dir)().filter(|_| !came_from_file)?;
        Some(Saving {
            store: Arc::clone(&self.store),
            dir,
            inputs,
            key,
            recording: Arc::clone(recording),
        })
    }

    /// The structure cannot be recorded (`shape` is what it synthesizes to): later batches
    /// synthesize it directly, pre-sized.
    pub(crate) fn unrecordable(mut self, key: Key, inputs: usize, shape: Shape) {
        let hold = std::mem::replace(&mut self.hold, Hold::Released);
        {
            let mut state = lock(&self.store.state);
            state
                .entries
                .insert(key, (inputs, Slot::Unrecordable(shape)));
            state.stats.unrecordable += 1;
            if let Hold::Unknown = hold {
                state.recording_unknown = false;
            }
        }
        self.store.changed.notify_all();
    }

    /// Given back unjudged: nothing is recorded (the parameters give no key to file it
    /// under), or the circuit, not the recording, failed a proof.
    pub(crate) fn abandon(mut self) {
        self.release();
    }

    /// A proof made with the recording does not verify, `why` said once in the log: it is
    /// dropped, and the file it was opened from (if that is still the file at its path)
    /// removed.
    pub(crate) fn reject(mut self, why: &str) {
        lock(&self.store.state).stats.rejected += 1;
        match self.file() {
            Some(file) => files::remove_loaded(file, why),
            None => self.say_new_dropped(why),
        }
        self.release();
    }

    /// Says once in the log why a recording made in this process (no file) is dropped.
    fn say_new_dropped(&self, why: &str) {
        if let Some(key) = self.key() {
            warn_once(format!("rejected {key:?}"), || {
                format!("synthpool: a new recording is dropped: {why}")
            });
        }
    }

    /// The batch ended before a proof made with the recording was checked (a member failed
    /// or did not fit, or the batch was abandoned): the recording is dropped unjudged. The
    /// failure may be the caller's, so a file it came from stays for other processes; this
    /// one does not read it again (the structure is recorded anew, and the next trusted
    /// recording replaces the file), so a file that fails every batch fails only one.
    fn abandon_unchecked(&mut self) {
        {
            let mut state = lock(&self.store.state);
            state.stats.rejected += 1;
            if let Some(file) = self.file() {
                state.refused.insert(file.path.clone());
            }
        }
        let why = "its batch ended before a proof made with it was checked";
        if let Some(file) = self.file() {
            warn_once(format!("unchecked {}", file.path.display()), || {
                format!(
                    "synthpool: not using the cached recording {} again in this process ({why}); \
                     the file stays, and the next trusted recording replaces it",
                    file.path.display()
                )
            });
        } else {
            self.say_new_dropped(why);
        }
        self.release();
    }

    /// Gives the structure back: its slot goes, and batches waiting for it look again.
    fn release(&mut self) {
        let hold = std::mem::replace(&mut self.hold, Hold::Released);
        {
            let mut state = lock(&self.store.state);
            match hold {
                Hold::Known { key, .. } => {
                    if matches!(state.entries.get(&key), Some((_, Slot::Probation))) {
                        state.entries.remove(&key);
                    }
                }
                Hold::Unknown => state.recording_unknown = false,
                Hold::Released => {}
            }
        }
        self.store.changed.notify_all();
    }
}

impl<Scalar: PrimeField> Drop for Probation<Scalar> {
    fn drop(&mut self) {
        if !matches!(self.hold, Hold::Released) {
            self.abandon_unchecked();
        }
    }
}

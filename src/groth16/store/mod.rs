//! Recordings per circuit structure for the life of the process, each with the trust it
//! has earned (the life of a structure's recording is in `groth16`'s documentation), and
//! the storage kept for the next batch.
//!
//! A structure is filed under a [`Key`] that names it for certain: a digest of the
//! parameters' verifying key, since parameters are made for one structure. Lookups ask for
//! the key of each input count the store and the cache directory know (parameter sources
//! take the input count when asked for their verifying key).
//!
//! The state lock is never held across a file operation or a verifying key's digest: the
//! cache directory is listed and opened with the lock released (a structure whose file is
//! being opened is on probation, so its other batches wait and other structures go on),
//! and under the watchdog, so a hung disk stalls nothing.

mod probation;
mod registry;
mod retention;
mod saving;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use ff::PrimeField;

use super::files::{self, CacheFile, Listing, OnDisk};
use super::key::{Key, KeyFor};
use super::watchdog::GaveUp;
use crate::precompiled::Recording;
use crate::shape::Shape;
use crate::vectors::ProverVectors;
use crate::warn_once::warn_once;

pub(crate) use self::probation::Probation;
pub use self::registry::{clear, stats};
pub(crate) use self::registry::{release_kept, store};
pub(crate) use self::saving::Saving;

/// What the drop-ins have done in this process, for one field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Recordings made (the first batch of a new structure).
    pub recorded: u64,
    /// Recordings read from the persistent cache.
    pub loaded: u64,
    /// Recordings trusted: a proof made with them verified.
    pub trusted: u64,
    /// Recordings rejected: their proof did not verify, or their batch failed first.
    pub rejected: u64,
    /// Recordings written to the persistent cache.
    pub saved: u64,
    /// Cache files that could not be used.
    pub refused_files: u64,
    /// Structures found impossible to record (synthesized directly since).
    pub unrecordable: u64,
    /// Batches synthesized directly (unrecordable structures, or a rayon worker that would
    /// have had to wait for a verdict).
    pub direct_batches: u64,
    /// Batches synthesized by evaluating a trusted recording.
    pub evaluated_batches: u64,
    /// Members synthesized into storage a previous batch kept.
    pub reused_buffers: u64,
    /// Members' storage handed back by their proof for the next members of their batch
    /// (retention on, or a prover that keeps it for free: supraseal).
    pub handed_back: u64,
    /// Members a recording failed (its evaluation, the parameters' check or the proof's
    /// verification), made again from their circuit and synthesized directly.
    pub redone_members: u64,
}

/// What the store holds for one structure.
enum Slot<Scalar: PrimeField> {
    /// A batch is reading, making or checking the recording.
    Probation,
    /// The recording serves every batch; the file holding it, when this process knows
    /// which file that is (it loaded or saved it).
    Trusted(Arc<Recording<Scalar>>, Option<CacheFile>),
    /// The structure cannot be recorded: synthesize it directly, pre-sized.
    Unrecordable(Shape),
}

struct State<Scalar: PrimeField> {
    stats: CacheStats,
    /// Per key, the input count it was filed with and its slot.
    entries: HashMap<Key, (usize, Slot<Scalar>)>,
    /// Files that could not be used, so they are not read again (and cache directories
    /// that could not be listed in bounded time).
    refused: HashSet<PathBuf>,
    /// Whether a batch is recording a structure whose key it does not know yet (known once
    /// its first member is synthesized).
    recording_unknown: bool,
    /// Spent storage kept for the next batch of a structure.
    kept: Option<(Key, Vec<ProverVectors<Scalar>>)>,
}

/// How a store reaches the cache directory: through `files`, or a stand-in in its tests.
struct Disk<Scalar: PrimeField> {
    dir: fn() -> Option<PathBuf>,
    list: fn(&Path) -> Result<Listing, GaveUp>,
    load: fn(&Path, usize, &Key) -> OnDisk<Scalar>,
}

/// One field's store.
pub(crate) struct Store<Scalar: PrimeField> {
    state: Mutex<State<Scalar>>,
    changed: Condvar,
    disk: Disk<Scalar>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves consistent data (every update is a single
    // insert, remove or assignment), so the poison is ignored.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How a batch begins.
pub(crate) enum Start<Scalar: PrimeField> {
    /// Evaluate a trusted recording, filed under this key.
    Trusted(Key, Arc<Recording<Scalar>>),
    /// Synthesize directly, pre-sized when the shape is known.
    Direct(Option<Shape>),
    /// Record the structure from the first member (its key is known once that member is).
    Record(Probation<Scalar>),
    /// Check a recording loaded from the cache directory with the first member.
    Check(Arc<Recording<Scalar>>, Probation<Scalar>),
}

/// What a lookup found.
enum Lookup<Scalar: PrimeField> {
    Absent,
    Busy,
    Ready(Start<Scalar>),
    /// A cache file to read, for this key and input count.
    File(Key, usize, PathBuf),
}

/// The cache files a batch found when it began: the directory, and each file's input count
/// and name.
#[derive(Default)]
struct Listed {
    dir: Option<PathBuf>,
    counts: Vec<usize>,
    names: HashSet<String>,
}

/// A key a batch's structure may be filed under: with its input count, and its file when
/// the cache directory has one.
struct Candidate {
    inputs: usize,
    key: Key,
    file: Option<PathBuf>,
}

impl<Scalar: PrimeField> Store<Scalar> {
    fn new(disk: Disk<Scalar>) -> Self {
        Store {
            state: Mutex::new(State {
                stats: CacheStats::default(),
                entries: HashMap::new(),
                refused: HashSet::new(),
                recording_unknown: false,
                kept: None,
            }),
            changed: Condvar::new(),
            disk,
        }
    }

    /// How a batch of the structure `key_for` names (`key_for(inputs)`: the parameters'
    /// key, asked with an input count) begins; waits while another batch holds the
    /// structure on probation, unless this thread is a rayon worker. `files`: the batch can
    /// take a recording that a file could fail (it can make a member's circuit again), so
    /// it reads the cache directory and evaluates recordings read in place.
    pub(crate) fn begin(self: &Arc<Self>, key_for: &KeyFor<'_>, files: bool) -> Start<Scalar> {
        // Files this batch read and could not use (or found gone) are not looked at again.
        let mut tried = HashSet::new();
        let listed = if files {
            self.listed()
        } else {
            Listed::default()
        };
        loop {
            let candidates = self.candidates(key_for, &listed);
            let mut state = lock(&self.state);
            match find(&state, &candidates, &tried, files) {
                Lookup::Ready(start) => {
                    match start {
                        Start::Trusted(..) => state.stats.evaluated_batches += 1,
                        _ => state.stats.direct_batches += 1,
                    }
                    return start;
                }
                Lookup::File(key, inputs, path) => {
                    state.entries.insert(key, (inputs, Slot::Probation));
                    drop(state);
                    let probation = Probation::known(Arc::clone(self), key, inputs);
                    if let Some(start) = self.read(probation, &path) {
                        return start;
                    }
                    tried.insert(path);
                    continue;
                }
                Lookup::Absent if !state.recording_unknown => {
                    state.recording_unknown = true;
                    return Start::Record(Probation::unknown(Arc::clone(self)));
                }
                Lookup::Absent | Lookup::Busy => {}
            }
            if rayon::current_thread_index().is_some() {
                log::debug!(
                    "synthpool: a recording is on probation elsewhere; synthesizing directly"
                );
                state.stats.direct_batches += 1;
                return Start::Direct(None);
            }
            drop(
                self.changed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner),
            );
        }
    }

    /// How a batch whose parameters give no key begins: directly, since no recording could
    /// be filed or earn trust.
    pub(crate) fn begin_unkeyed(&self) -> Start<Scalar> {
        lock(&self.state).stats.direct_batches += 1;
        Start::Direct(None)
    }

    /// The cache directory's files, listed once per batch without the state lock (a
    /// directory that cannot be listed in bounded time is not listed again).
    fn listed(&self) -> Listed {
        let dir = (self.disk.dir)();
        let mut listed = Listed {
            dir: dir.clone(),
            counts: Vec::new(),
            names: HashSet::new(),
        };
        let Some(dir) = dir.filter(|dir| !lock(&self.state).refused.contains(dir)) else {
            return listed;
        };
        match (self.disk.list)(&dir) {
            Ok(listing) => {
                for (inputs, name) in listing {
                    listed.counts.push(inputs);
                    listed.names.insert(name);
                }
            }
            Err(gave_up) => {
                warn_once(format!("listing {}", dir.display()), || {
                    format!(
                        "synthpool: not using the recording cache {} in this process \
                         ({gave_up} while listing it)",
                        dir.display()
                    )
                });
                lock(&self.state).refused.insert(dir);
            }
        }
        listed
    }

    /// The keys the structure may be filed under, with their files: asked of `key_for`
    /// for each input count filed in memory or named in `listed`, without the state lock.
    fn candidates(&self, key_for: &KeyFor<'_>, listed: &Listed) -> Vec<Candidate> {
        let mut counts: Vec<usize> = {
            let state = lock(&self.state);
            state.entries.values().map(|(inputs, _)| *inputs).collect()
        };
        counts.extend_from_slice(&listed.counts);
        counts.sort_unstable();
        counts.dedup();
        counts
            .into_iter()
            .filter_map(|inputs| {
                let key = key_for(inputs)?;
                let name = files::file_name(inputs, &key);
                let file = match &listed.dir {
                    Some(dir) if listed.names.contains(&name) => Some(dir.join(name)),
                    _ => None,
                };
                Some(Candidate { inputs, key, file })
            })
            .collect()
    }

    /// Reads the cache file at `path` for the structure `probation` holds (no lock held):
    /// the batch's start when the file loads; `None` when it is refused or gone, with the
    /// structure given back.
    fn read(&self, mut probation: Probation<Scalar>, path: &Path) -> Option<Start<Scalar>> {
        let (key, inputs) = probation
            .structure()
            .expect("a file is read for a known structure");
        match (self.disk.load)(path, inputs, &key) {
            OnDisk::Loaded(recording, file) => {
                lock(&self.state).stats.loaded += 1;
                probation.opened(file);
                Some(Start::Check(Arc::from(recording), probation))
            }
            found => {
                if let OnDisk::Refused = found {
                    let mut state = lock(&self.state);
                    state.stats.refused_files += 1;
                    state.refused.insert(path.to_path_buf());
                }
                probation.abandon();
                None
            }
        }
    }

    /// Counts a member made again directly after a recording failed it.
    pub(crate) fn redone(&self) {
        lock(&self.state).stats.redone_members += 1;
    }

    /// Drops a trusted recording a circuit did not fit (the circuit may be the one at
    /// fault): the file stays, and the next batch of the structure checks it again.
    pub(crate) fn forget(&self, key: &Key) {
        {
            let mut state = lock(&self.state);
            state.stats.rejected += 1;
            state.entries.remove(key);
        }
        self.changed.notify_all();
    }

    /// Drops a trusted recording that failed a member for `why`, with the file holding it
    /// if this process knows which file that is and it is still there.
    pub(crate) fn evict(&self, key: &Key, why: &str) {
        let removed = {
            let mut state = lock(&self.state);
            state.stats.rejected += 1;
            state.entries.remove(key)
        };
        if let Some((_, Slot::Trusted(_, Some(file)))) = removed {
            files::remove_loaded(&file, why);
        }
        self.changed.notify_all();
    }
}

/// The structure's slot in memory, or else a cache file to read for it, among `candidates`
/// (files in `tried`, or refused before, are not read again); without `files`, a trusted
/// recording read in place from a file is not taken either (the batch is direct).
fn find<Scalar: PrimeField>(
    state: &State<Scalar>,
    candidates: &[Candidate],
    tried: &HashSet<PathBuf>,
    files: bool,
) -> Lookup<Scalar> {
    for candidate in candidates {
        if let Some((_, slot)) = state.entries.get(&candidate.key) {
            return match slot {
                Slot::Probation => Lookup::Busy,
                Slot::Trusted(recording, _) if !files && recording.is_mapped() => {
                    Lookup::Ready(Start::Direct(Some(recording.shape())))
                }
                Slot::Trusted(recording, _) => {
                    Lookup::Ready(Start::Trusted(candidate.key, Arc::clone(recording)))
                }
                Slot::Unrecordable(shape) => Lookup::Ready(Start::Direct(Some(*shape))),
            };
        }
    }
    for candidate in candidates {
        if let Some(path) = &candidate.file {
            if !state.refused.contains(path) && !tried.contains(path) {
                return Lookup::File(candidate.key, candidate.inputs, path.clone());
            }
        }
    }
    Lookup::Absent
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::precompiled::KEY_LEN;
    use std::sync::mpsc;
    use std::time::Duration;

    type Scalar = blstrs::Scalar;

    const BUSY: Key = [1; KEY_LEN];
    const OTHER: Key = [2; KEY_LEN];

    /// Whether the stand-in's read of BUSY's file may finish, and whether it has begun.
    static GATE: Mutex<(bool, bool)> = Mutex::new((false, false));
    static GATE_CHANGED: Condvar = Condvar::new();

    fn test_dir() -> Option<PathBuf> {
        Some(std::env::temp_dir().join(format!("synthpool-store-{}", std::process::id())))
    }

    fn list_busy(_: &Path) -> Result<Listing, GaveUp> {
        Ok(vec![(1, files::file_name(1, &BUSY))])
    }

    /// A read that begins, then waits for the gate, then finds the file damaged.
    fn load_gated(_: &Path, _: usize, _: &Key) -> OnDisk<Scalar> {
        let mut gate = lock(&GATE);
        gate.1 = true;
        GATE_CHANGED.notify_all();
        while !gate.0 {
            gate = GATE_CHANGED
                .wait(gate)
                .unwrap_or_else(PoisonError::into_inner);
        }
        OnDisk::Refused
    }

    fn begin_on_a_thread(store: &Arc<Store<Scalar>>, key: Key) -> mpsc::Receiver<Start<Scalar>> {
        let (sender, receiver) = mpsc::channel();
        let store = Arc::clone(store);
        std::thread::spawn(move || {
            let key_for = move |_: usize| Some(key);
            let _ = sender.send(store.begin(&key_for, true));
        });
        receiver
    }

    const PATIENCE: Duration = Duration::from_secs(20);

    #[test]
    fn a_file_being_read_holds_up_its_own_structure_only() {
        let store = Arc::new(Store::<Scalar>::new(Disk {
            dir: test_dir,
            list: list_busy,
            load: load_gated,
        }));
        let reader = begin_on_a_thread(&store, BUSY);
        {
            let mut gate = lock(&GATE);
            while !gate.1 {
                gate = GATE_CHANGED
                    .wait(gate)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
        // While BUSY's file is being read: another structure starts at once...
        let other = begin_on_a_thread(&store, OTHER).recv_timeout(PATIENCE);
        assert!(
            matches!(other, Ok(Start::Record(_))),
            "the other structure waited"
        );
        drop(other);
        // ...and another batch of BUSY waits for the read.
        let waiting = begin_on_a_thread(&store, BUSY);
        assert!(waiting.recv_timeout(Duration::from_millis(300)).is_err());

        lock(&GATE).0 = true;
        GATE_CHANGED.notify_all();
        // The file is refused and not read again: one of the two records the structure
        // anew, the other waits for that recording.
        let deadline = std::time::Instant::now() + PATIENCE;
        let (first, second) = loop {
            assert!(
                std::time::Instant::now() < deadline,
                "neither batch started"
            );
            if let Ok(start) = reader.try_recv() {
                break (start, waiting);
            }
            if let Ok(start) = waiting.try_recv() {
                break (start, reader);
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(matches!(first, Start::Record(_)));
        assert!(second.recv_timeout(Duration::from_millis(300)).is_err());
        drop(first);
        let after = second.recv_timeout(PATIENCE);
        assert!(matches!(after, Ok(Start::Record(_))));
        let stats = lock(&store.state).stats;
        assert_eq!((stats.loaded, stats.refused_files), (0, 1));
    }
}

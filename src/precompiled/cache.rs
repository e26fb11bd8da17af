//! Recordings cached per circuit structure for the life of the process, and on disk when a
//! directory is set: what lets a batch prover record a structure once and synthesize every
//! later circuit of it by witness generation and evaluation.
//!
//! A recording is cached under a [`Key`] that names the structure for certain: the batch
//! prover uses a digest of the Groth16 parameters' verifying key, since parameters are made
//! for one circuit structure. Lookups ask for the key of each input count the cache holds
//! (parameter sources take the input count when asked for their verifying key).
//!
//! Rules, in order of precedence:
//! 1. Never a wrong assignment: a cached recording is only applied through
//!    [`Recording::synthesize`], which refuses witnesses of other counts and rows they do
//!    not satisfy; a new recording must reproduce the direct synthesis it was made with,
//!    and is written to disk only after a proof made with it verified.
//! 2. Concurrent callers of one structure share one recording: one records, the others wait
//!    for it. A rayon worker never waits (it could be holding up the very recording it waits
//!    for): it synthesizes directly instead.
//! 3. Files are written atomically; a file that cannot be used (damaged, of another version,
//!    field or key) is never used, and said so once; the next recording replaces it.
//! 4. Spent vectors are kept for the next batch only when asked ([`set_retain_buffers`] or
//!    `SYNTHPOOL_RETAIN_BUFFERS=1`), and only for one structure at a time: they are as large
//!    as the batch's a, b, c and aux, idle between batches.

use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use bellpepper_core::Circuit;
use ff::PrimeField;
use rayon::prelude::*;

use super::file::KEY_LEN;
use super::Recording;
use crate::assignment::SynthesisOptions;
use crate::error::Error;
use crate::synthesize::{first_failure, synthesize_batch_with};
use crate::vectors::{ProverVectors, Shape};

/// What a cached recording is filed under.
pub type Key = [u8; KEY_LEN];

/// The environment variable naming the directory of the persistent cache.
pub const CACHE_DIR_VARIABLE: &str = "SYNTHPOOL_RECORDING_CACHE";

/// The environment variable that, set to `1`, keeps each batch's spent vectors for the next
/// batch of the same structure (see [`set_retain_buffers`]).
pub const RETAIN_BUFFERS_VARIABLE: &str = "SYNTHPOOL_RETAIN_BUFFERS";

/// The choice made through [`set_retain_buffers`], if any.
static RETAIN_BUFFERS: Mutex<Option<bool>> = Mutex::new(None);

/// The directory set through [`set_cache_dir`], if any: `Some(None)` switches the
/// persistent cache off whatever the environment says.
static CACHE_DIR: Mutex<Option<Option<PathBuf>>> = Mutex::new(None);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere while holding the lock leaves consistent data here (every update is
    // a single insert or remove), so the poison is ignored.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Sets the persistent cache's directory (`None`: no persistent cache), overriding the
/// `SYNTHPOOL_RECORDING_CACHE` environment variable.
pub fn set_cache_dir(dir: Option<PathBuf>) {
    *lock(&CACHE_DIR) = Some(dir);
}

/// The persistent cache's directory: the one set through [`set_cache_dir`], else the
/// `SYNTHPOOL_RECORDING_CACHE` environment variable, else none.
pub fn cache_dir() -> Option<PathBuf> {
    match lock(&CACHE_DIR).clone() {
        Some(set) => set,
        None => std::env::var_os(CACHE_DIR_VARIABLE)
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from),
    }
}

/// Whether the batch prover keeps each batch's spent vectors (the storage of a, b, c and
/// of the input and aux values) for the next batch of the same structure, overriding the
/// `SYNTHPOOL_RETAIN_BUFFERS` environment variable. Kept vectors are written again instead
/// of fresh pages being faulted in (synthesis as fast as a proving loop that recycles its
/// buffers), at the price of holding one batch's vectors while no batch runs: per circuit,
/// 96 bytes per constraint for a, b and c (padded to the FFT domain's power of two, up to
/// twice that) and 32 per aux value. Off unless asked for; switching it off frees them.
pub fn set_retain_buffers(retain: bool) {
    *lock(&RETAIN_BUFFERS) = Some(retain);
    if !retain {
        release_buffers();
    }
}

/// Whether spent vectors are kept: the choice made through [`set_retain_buffers`], else
/// whether `SYNTHPOOL_RETAIN_BUFFERS` is `1`.
pub fn retains_buffers() -> bool {
    match *lock(&RETAIN_BUFFERS) {
        Some(retain) => retain,
        None => std::env::var_os(RETAIN_BUFFERS_VARIABLE).is_some_and(|value| value == "1"),
    }
}

/// Drops the spent vectors kept for the next batch, of every field.
fn release_buffers() {
    for store in lock(stores()).values() {
        store.release_buffers();
    }
}

fn hex(key: &Key) -> String {
    key.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `{inputs}-{key}.rec`: the input count lets a lookup ask for the key before reading.
fn file_name(inputs: usize, key: &Key) -> String {
    format!("{inputs}-{}.rec", hex(key))
}

/// The input count of a cache file's name, if it is one.
fn inputs_of(name: &str) -> Option<usize> {
    let (inputs, rest) = name.strip_suffix(".rec")?.split_once('-')?;
    (rest.len() == 2 * KEY_LEN && rest.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| inputs.parse().ok())
        .flatten()
}

/// Logs `message` at warning level the first time `what` is said.
fn warn_once(what: String, message: impl FnOnce() -> String) {
    static SAID: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    if lock(SAID.get_or_init(Default::default)).insert(what) {
        log::warn!("{}", message());
    }
}

/// What the cache holds for one structure.
enum Entry<Scalar: PrimeField> {
    /// A recording, and whether a proof made with it verified.
    Recorded {
        recording: Arc<Recording<Scalar>>,
        verified: bool,
    },
    /// The structure cannot be recorded: synthesize it directly, pre-sized.
    Unrecordable { shape: Shape },
}

/// What the cache has done in this process, for one field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Recordings made (the first batch of a new structure).
    pub recorded: u64,
    /// Recordings read from the persistent cache.
    pub loaded: u64,
    /// Recordings written to the persistent cache.
    pub saved: u64,
    /// Cache files that could not be used.
    pub refused_files: u64,
    /// Structures found impossible to record (synthesized directly since).
    pub unrecordable: u64,
    /// Batches synthesized directly (unrecordable structures, or a rayon worker that would
    /// have had to wait for a recording).
    pub direct_batches: u64,
    /// Batches synthesized by evaluating a cached recording.
    pub evaluated_batches: u64,
    /// Members synthesized into vectors a previous batch handed back.
    pub reused_buffers: u64,
}

struct State<Scalar: PrimeField> {
    stats: CacheStats,
    entries: HashMap<Key, (usize, Entry<Scalar>)>,
    /// Files that could not be used, so they are not read again.
    refused: HashSet<PathBuf>,
    /// Whether some caller is recording a new structure now.
    recording: bool,
    /// Spent vectors handed back by a batch, and the structure they were sized for.
    spent: Option<(Key, Vec<ProverVectors<Scalar>>)>,
}

/// The cache of one field's recordings.
struct Store<Scalar: PrimeField> {
    state: Mutex<State<Scalar>>,
    recorded: Condvar,
}

/// Every field's store, filed under the field's type.
fn stores() -> &'static Mutex<HashMap<TypeId, Arc<dyn AnyStore>>> {
    static STORES: OnceLock<Mutex<HashMap<TypeId, Arc<dyn AnyStore>>>> = OnceLock::new();
    STORES.get_or_init(Default::default)
}

/// What is done to every field's store at once.
trait AnyStore: Any + Send + Sync {
    fn release_buffers(&self);
    fn as_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

impl<Scalar: PrimeField> AnyStore for Store<Scalar> {
    fn release_buffers(&self) {
        let released = lock(&self.state).spent.take();
        // Freed outside the lock: returning gigabytes to the system takes a while.
        drop(released);
    }

    fn as_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

/// The store of `Scalar`'s recordings, one per field type for the whole process.
fn store<Scalar: PrimeField>() -> Arc<Store<Scalar>> {
    let mut stores = lock(stores());
    let store = stores.entry(TypeId::of::<Scalar>()).or_insert_with(|| {
        Arc::new(Store::<Scalar> {
            state: Mutex::new(State {
                stats: CacheStats::default(),
                entries: HashMap::new(),
                refused: HashSet::new(),
                recording: false,
                spent: None,
            }),
            recorded: Condvar::new(),
        })
    });
    Arc::clone(store)
        .as_any()
        .downcast::<Store<Scalar>>()
        .expect("stores are filed under their own type")
}

/// How a batch is to be synthesized.
enum Plan<Scalar: PrimeField> {
    Evaluate {
        key: Key,
        recording: Arc<Recording<Scalar>>,
        verified: bool,
    },
    Direct {
        shape: Option<Shape>,
    },
    Record,
}

/// Vectors of a batch, and the recording they were evaluated with, if any.
pub struct CachedBatch<Scalar> {
    /// The vectors, in the batch's order.
    pub vectors: Vec<ProverVectors<Scalar>>,
    /// The key of the recording the batch was evaluated with (none when it was synthesized
    /// directly): where [`give_back`] files the spent vectors.
    pub evaluated_with: Option<Key>,
    /// Whether a proof made with that recording has verified (true when there is none).
    pub verified: bool,
}

impl<Scalar> CachedBatch<Scalar> {
    /// A batch synthesized directly.
    fn direct(vectors: Vec<ProverVectors<Scalar>>) -> Self {
        CachedBatch {
            vectors,
            evaluated_with: None,
            verified: true,
        }
    }

    /// The key of the recording the batch was evaluated with, when no proof made with it has
    /// verified yet: pass the verdict on the first proof to [`proof_verified`].
    pub fn unverified(&self) -> Option<Key> {
        self.evaluated_with.filter(|_| !self.verified)
    }
}

impl<Scalar: PrimeField> Store<Scalar> {
    /// The entry for these parameters, from memory or from disk.
    fn find(
        &self,
        state: &mut State<Scalar>,
        key_for: &dyn Fn(usize) -> Option<Key>,
    ) -> Option<Key> {
        let dir = cache_dir();
        let mut counts: Vec<usize> = state.entries.values().map(|(inputs, _)| *inputs).collect();
        if let Some(dir) = &dir {
            if let Ok(listing) = std::fs::read_dir(dir) {
                counts.extend(
                    listing
                        .filter_map(Result::ok)
                        .filter_map(|e| inputs_of(&e.file_name().to_string_lossy())),
                );
            }
        }
        counts.sort_unstable();
        counts.dedup();
        for inputs in counts {
            let Some(key) = key_for(inputs) else { continue };
            if state.entries.contains_key(&key) {
                return Some(key);
            }
            if let Some(dir) = &dir {
                if self.load(state, &dir.join(file_name(inputs, &key)), inputs, &key) {
                    return Some(key);
                }
            }
        }
        None
    }

    /// Loads a cache file into `state`; false when there is none or it cannot be used.
    fn load(&self, state: &mut State<Scalar>, path: &Path, inputs: usize, key: &Key) -> bool {
        if !path.exists() || state.refused.contains(path) {
            return false;
        }
        let started = Instant::now();
        match Recording::<Scalar>::load_keyed(path, key) {
            Ok(recording) if recording.shape().inputs == inputs => {
                log::info!(
                    "synthpool: loaded the recording {} ({} constraints, {} nonzeros) in {:.1?}",
                    path.display(),
                    recording.shape().constraints,
                    recording.nonzeros(),
                    started.elapsed()
                );
                // Only recordings whose proof verified are ever saved.
                let entry = Entry::Recorded {
                    recording: Arc::new(recording),
                    verified: true,
                };
                state.entries.insert(*key, (inputs, entry));
                state.stats.loaded += 1;
                true
            }
            outcome => {
                let why = match outcome {
                    Err(e) => e.to_string(),
                    Ok(_) => format!("{}: its input count is not its name's", path.display()),
                };
                warn_once(path.display().to_string(), || {
                    format!("synthpool: not using the cached recording ({why}); recording anew")
                });
                state.refused.insert(path.to_path_buf());
                state.stats.refused_files += 1;
                false
            }
        }
    }

    /// What to do with a batch under these parameters; waits while another caller records
    /// (unless this thread is a rayon worker).
    fn plan(&self, key_for: &dyn Fn(usize) -> Option<Key>) -> Plan<Scalar> {
        let mut state = lock(&self.state);
        loop {
            if let Some(key) = self.find(&mut state, key_for) {
                let plan = match &state.entries[&key].1 {
                    Entry::Recorded {
                        recording,
                        verified,
                    } => Plan::Evaluate {
                        key,
                        recording: Arc::clone(recording),
                        verified: *verified,
                    },
                    Entry::Unrecordable { shape } => Plan::Direct {
                        shape: Some(*shape),
                    },
                };
                match plan {
                    Plan::Evaluate { .. } => state.stats.evaluated_batches += 1,
                    _ => state.stats.direct_batches += 1,
                }
                return plan;
            }
            if !state.recording {
                state.recording = true;
                return Plan::Record;
            }
            if rayon::current_thread_index().is_some() {
                log::debug!(
                    "synthpool: a recording is being made elsewhere; synthesizing directly"
                );
                state.stats.direct_batches += 1;
                return Plan::Direct { shape: None };
            }
            state = self
                .recorded
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Ends a recording begun by [`Self::plan`], filing `entry` (if any) under `key`.
    fn finish_recording(&self, filed: Option<(Key, usize, Entry<Scalar>)>) {
        let mut state = lock(&self.state);
        if let Some((key, inputs, entry)) = filed {
            match entry {
                Entry::Recorded { .. } => state.stats.recorded += 1,
                Entry::Unrecordable { .. } => state.stats.unrecordable += 1,
            }
            state.entries.insert(key, (inputs, entry));
        }
        state.recording = false;
        self.recorded.notify_all();
    }

    fn evict(&self, key: &Key) {
        lock(&self.state).entries.remove(key);
    }

    /// Up to `count` spent vectors kept for the structure `key`, or none.
    fn take_spent(&self, key: &Key, count: usize) -> Vec<ProverVectors<Scalar>> {
        let mut state = lock(&self.state);
        let Some((held, spent)) = &mut state.spent else {
            return Vec::new();
        };
        if held != key {
            return Vec::new();
        }
        let taken = spent.split_off(spent.len().saturating_sub(count));
        state.stats.reused_buffers += taken.len() as u64;
        taken
    }
}

/// Clears the recording flag if the recording caller fails or panics before filing.
struct RecordingClaim<'a, Scalar: PrimeField> {
    store: &'a Store<Scalar>,
    filed: bool,
}

impl<Scalar: PrimeField> RecordingClaim<'_, Scalar> {
    fn file(mut self, filed: Option<(Key, usize, Entry<Scalar>)>) {
        self.filed = true;
        self.store.finish_recording(filed);
    }
}

impl<Scalar: PrimeField> Drop for RecordingClaim<'_, Scalar> {
    fn drop(&mut self) {
        if !self.filed {
            self.store.finish_recording(None);
        }
    }
}

/// Synthesizes `circuits` through the recording cached for the structure `key_for` names
/// (`key_for(inputs)`: the key of the parameters' structure, asked with an input count), or
/// records the structure from the first circuit when there is none. Errors name the member.
pub fn synthesize_cached<Scalar, C>(
    circuits: Vec<C>,
    key_for: &dyn Fn(usize) -> Option<Key>,
) -> Result<CachedBatch<Scalar>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    if circuits.is_empty() {
        return Ok(CachedBatch::direct(Vec::new()));
    }
    let store = store::<Scalar>();
    match store.plan(key_for) {
        Plan::Evaluate {
            key,
            recording,
            verified,
        } => {
            let vectors = evaluate_all(&store, &key, &recording, verified, circuits, 0)?;
            Ok(CachedBatch {
                vectors,
                evaluated_with: Some(key),
                verified,
            })
        }
        Plan::Direct { shape } => Ok(CachedBatch::direct(synthesize_directly(circuits, shape)?)),
        Plan::Record => record_first(
            &store,
            RecordingClaim {
                store: &store,
                filed: false,
            },
            circuits,
            key_for,
        ),
    }
}

/// Direct synthesis with the fastest options, pre-sized when the shape is known.
fn synthesize_directly<Scalar, C>(
    circuits: Vec<C>,
    shape: Option<Shape>,
) -> Result<Vec<ProverVectors<Scalar>>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    let options = SynthesisOptions {
        shape,
        ..SynthesisOptions::default()
    };
    synthesize_batch_with(circuits, &options)
}

/// Witness generation on the rayon pool, one task per member, each evaluating on all
/// threads, into spent vectors kept for this structure where there are some. A member of
/// another structure is an error; an unverified recording it does not fit is dropped from
/// the cache.
fn evaluate_all<Scalar, C>(
    store: &Store<Scalar>,
    key: &Key,
    recording: &Recording<Scalar>,
    verified: bool,
    circuits: Vec<C>,
    first_index: usize,
) -> Result<Vec<ProverVectors<Scalar>>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    let mut targets = store.take_spent(key, circuits.len());
    targets.resize_with(circuits.len(), ProverVectors::default);
    let results: Vec<_> = circuits
        .into_par_iter()
        .zip(targets)
        .map(|(circuit, target)| recording.synthesize_into(circuit, target))
        .collect();
    let refused = results.iter().any(|r| {
        matches!(
            r,
            Err(Error::StructureMismatch { .. } | Error::Unsatisfied { .. })
        )
    });
    if refused && !verified {
        log::warn!(
            "synthpool: a new recording does not fit a later circuit of its parameters; \
             dropped from the cache"
        );
        store.evict(key);
    }
    first_failure(results).map_err(|e| shift(e, first_index))
}

/// The cold path: records the first circuit while synthesizing it directly, files the
/// recording (or the reason it cannot be made), then synthesizes the rest through it.
fn record_first<Scalar, C>(
    store: &Store<Scalar>,
    claim: RecordingClaim<'_, Scalar>,
    circuits: Vec<C>,
    key_for: &dyn Fn(usize) -> Option<Key>,
) -> Result<CachedBatch<Scalar>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    let mut rest = circuits;
    let first = rest.remove(0);
    let started = Instant::now();
    let (recording, first_vectors) =
        Recording::record_and_synthesize(first).map_err(|e| e.member(0))?;
    let shape = first_vectors.shape();
    let Some(key) = key_for(shape.inputs) else {
        log::warn!("synthpool: the parameters give no verifying key; not caching a recording");
        drop(claim);
        return first_then_direct(first_vectors, rest);
    };
    let recording = recording.and_then(|recording| {
        recording.reproduces(&first_vectors)?;
        Ok(recording)
    });
    match recording {
        Ok(recording) => {
            log::info!(
                "synthpool: recorded {} constraints ({} nonzeros, {:.1} MB) in {:.1?}",
                shape.constraints,
                recording.nonzeros(),
                recording.bytes_per_nonzero() * recording.nonzeros() as f64 / 1e6,
                started.elapsed()
            );
            let recording = Arc::new(recording);
            claim.file(Some((
                key,
                shape.inputs,
                Entry::Recorded {
                    recording: Arc::clone(&recording),
                    verified: false,
                },
            )));
            let mut vectors = vec![first_vectors];
            vectors.extend(evaluate_all(store, &key, &recording, false, rest, 1)?);
            Ok(CachedBatch {
                vectors,
                evaluated_with: Some(key),
                verified: false,
            })
        }
        Err(why) => {
            warn_once(hex(&key), || {
                format!(
                    "synthpool: this circuit cannot be recorded ({why}); synthesizing it \
                     directly"
                )
            });
            claim.file(Some((key, shape.inputs, Entry::Unrecordable { shape })));
            first_then_direct(first_vectors, rest)
        }
    }
}

/// The first member's vectors, then the rest synthesized directly, pre-sized to its shape.
fn first_then_direct<Scalar, C>(
    first: ProverVectors<Scalar>,
    rest: Vec<C>,
) -> Result<CachedBatch<Scalar>, Error>
where
    Scalar: PrimeField,
    C: Circuit<Scalar> + Send,
{
    let shape = first.shape();
    let mut vectors = vec![first];
    vectors.extend(synthesize_directly(rest, Some(shape)).map_err(|e| shift(e, 1))?);
    Ok(CachedBatch::direct(vectors))
}

/// A batch error of members counted from `offset`.
fn shift(error: Error, offset: usize) -> Error {
    match error {
        Error::Member { index, source } => Error::Member {
            index: index + offset,
            source,
        },
        other => other,
    }
}

/// The verdict on the first proof made with the recording filed under `key`: a verified
/// recording is kept (and saved to the persistent cache, if one is set); one whose proof
/// does not verify is dropped, since its circuit does not match the parameters.
pub fn proof_verified<Scalar: PrimeField>(key: &Key, verified: bool) {
    let store = store::<Scalar>();
    let mut state = lock(&store.state);
    let Some((
        inputs,
        Entry::Recorded {
            recording,
            verified: known_good,
        },
    )) = state.entries.get_mut(key)
    else {
        return;
    };
    if *known_good {
        // Another batch's proof verified it already: a failing proof now is that circuit's.
        return;
    }
    if !verified {
        state.entries.remove(key);
        drop(state);
        log::warn!(
            "synthpool: a proof made with a new recording does not verify against its \
             parameters (the circuit does not match them?); the recording is dropped"
        );
        return;
    }
    *known_good = true;
    let (inputs, recording) = (*inputs, Arc::clone(recording));
    drop(state);
    if let Some(dir) = cache_dir() {
        let path = dir.join(file_name(inputs, key));
        let started = Instant::now();
        let saved = std::fs::create_dir_all(&dir)
            .map_err(|e| Error::file(&dir, crate::error::FileProblem::Io(e)))
            .and_then(|()| recording.save_keyed(&path, key));
        match saved {
            Ok(()) => {
                lock(&store.state).stats.saved += 1;
                log::info!(
                    "synthpool: saved the recording {} ({} bytes) in {:.1?}",
                    path.display(),
                    std::fs::metadata(&path).map_or(0, |m| m.len()),
                    started.elapsed()
                )
            }
            Err(e) => warn_once(path.display().to_string(), || {
                format!("synthpool: could not save the recording: {e}")
            }),
        }
    }
}

/// Hands a batch's spent vectors back (what the prover's `prove_keeping_buffers`
/// returns; their contents do not matter, every value is written again), to be synthesized into by the next batch of the structure `key` (a batch's
/// [`CachedBatch::evaluated_with`]). Kept only while [`retains_buffers`], and for one
/// structure at a time: vectors of another structure replace those held. Batches of the
/// structure that ran at the same time each hand theirs back, and all are kept (the next
/// concurrent batches need as many).
pub fn give_back<Scalar: PrimeField>(key: &Key, mut spent: Vec<ProverVectors<Scalar>>) {
    if !retains_buffers() {
        return;
    }
    let store = store::<Scalar>();
    let replaced = {
        let mut state = lock(&store.state);
        match &mut state.spent {
            Some((held, kept)) if held == key => {
                kept.append(&mut spent);
                None
            }
            slot => slot.replace((*key, spent)),
        }
    };
    // Freed outside the lock: returning gigabytes to the system takes a while.
    drop(replaced);
}

/// What the cache of `Scalar`'s recordings has done in this process.
pub fn stats<Scalar: PrimeField>() -> CacheStats {
    lock(&store::<Scalar>().state).stats
}

/// Drops the recording of `Scalar` cached for the structure `key` (a process done with a
/// proof type or sector size frees it this way), and the spent vectors kept for it; its
/// persistent cache file stays.
pub fn forget<Scalar: PrimeField>(key: &Key) {
    let store = store::<Scalar>();
    let released = {
        let mut state = lock(&store.state);
        state.entries.remove(key);
        match &state.spent {
            Some((held, _)) if held == key => state.spent.take(),
            _ => None,
        }
    };
    // Freed outside the lock: returning gigabytes to the system takes a while.
    drop(released);
}

/// Drops every recording of `Scalar` held in memory (their memory is freed once no batch
/// uses them) and forgets which files were refused; the persistent cache's files stay, and
/// so do spent vectors kept for a structure (switching retention off frees those).
pub fn clear<Scalar: PrimeField>() {
    let store = store::<Scalar>();
    let mut state = lock(&store.state);
    state.entries.clear();
    state.refused.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_carry_the_input_count_and_only_cache_files_parse() {
        let key = [0xab; KEY_LEN];
        let name = file_name(17, &key);
        assert_eq!(inputs_of(&name), Some(17));
        for other in [
            "17-ab.rec",
            "x-abab.rec",
            "porep.partial",
            &format!("17-{}.bin", hex(&key)),
        ] {
            assert_eq!(inputs_of(other), None, "{other}");
        }
    }
}

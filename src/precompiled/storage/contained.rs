//! Panics that a mapped file causes, contained without a word on stderr: a file damaged in
//! a way opening does not see (an index out of bounds) or changed while it is read makes
//! the evaluation reading it panic, on each of rayon's threads that meets it, and
//! `Recording::in_place` turns that into one error naming the file. The default panic hook
//! would first print a "thread panicked" line per thread, which is what an operator reads
//! in the prover's log, about a file the prover already recovers from.
//!
//! A hook installed once, the first time a file is mapped, says nothing for a panic raised
//! in pre-compiled evaluation's code while an evaluation reads a mapped file, and hands
//! every other panic to the hook installed before it. A hook installed after it replaces
//! it, and panics are printed again.

use std::panic::PanicHookInfo;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Evaluations reading a mapped file, in this process, now.
static READING: AtomicUsize = AtomicUsize::new(0);

/// While alive, an evaluation reads a mapped file: a panic it raises is not printed.
pub(crate) struct Reading(());

impl Reading {
    pub(crate) fn begin() -> Self {
        install();
        READING.fetch_add(1, Ordering::SeqCst);
        Reading(())
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        READING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Where the sources of pre-compiled evaluation are (this file is in its `storage/`), as
/// panic locations name them.
fn folder() -> &'static str {
    let here = file!();
    here.strip_suffix("storage/contained.rs").unwrap_or(here)
}

/// Whether a panic at `info` is one a mapped file caused.
fn caused_by_a_file(info: &PanicHookInfo<'_>) -> bool {
    READING.load(Ordering::SeqCst) > 0
        && info
            .location()
            .is_some_and(|location| location.file().starts_with(folder()))
}

fn install() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !caused_by_a_file(info) {
                before(info);
            }
        }));
    });
}

//! Warnings said once per process: a proving process runs for days, and a condition that
//! holds for every batch (a cache file it cannot use, a structure it cannot record) must
//! not fill its log.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock, PoisonError};

/// Logs `message` at warning level the first time `what` is said in this process.
pub(crate) fn warn_once(what: String, message: impl FnOnce() -> String) {
    static SAID: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let said = SAID.get_or_init(Default::default);
    if said
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(what)
    {
        log::warn!("{}", message());
    }
}

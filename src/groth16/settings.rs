//! The drop-ins' settings, each set by a function or, until then, by its environment
//! variable: the persistent cache's directory, buffer retention, and how many members of a
//! batch are in flight. A leaf of the drop-ins: it names none of their modules. One rule for
//! the three variables: set to the empty string, a
//! variable is the same as unset (shell scripts and unit files write `NAME=` to clear one).

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::Error;
use crate::warn_once::warn_once;

/// The environment variable naming the directory of the persistent cache: unset or empty,
/// [`DEFAULT_CACHE_DIR`]; [`CACHE_OFF`], no persistent cache.
pub const CACHE_DIR_VARIABLE: &str = "SYNTHPOOL_RECORDING_CACHE";

/// Where recordings are kept between processes when nothing says otherwise: beside
/// filecoin-proofs' own caches (`/var/tmp/filecoin-proof-parameters`,
/// `/var/tmp/filecoin-parents`), on a file system that survives a reboot.
pub const DEFAULT_CACHE_DIR: &str = "/var/tmp/synthpool-recordings";

/// The value of [`CACHE_DIR_VARIABLE`] that turns the persistent cache off.
pub const CACHE_OFF: &str = "off";

/// The environment variable that, set to `1`, keeps each batch's spent vectors for the next
/// batch of the same structure (see [`super::set_retain_buffers`]).
pub const RETAIN_BUFFERS_VARIABLE: &str = "SYNTHPOOL_RETAIN_BUFFERS";

/// The environment variable giving how many members of a batch may hold synthesized
/// vectors at once (see [`set_in_flight`]).
pub const IN_FLIGHT_VARIABLE: &str = "SYNTHPOOL_IN_FLIGHT";

/// Members in flight when nothing says otherwise: the next member is synthesized while the
/// current one is proven, and no more (README, "Configuration").
pub const DEFAULT_IN_FLIGHT: usize = 2;

/// What the setters chose; `None` leaves the environment variable in charge.
struct Chosen {
    cache_dir: Option<Option<PathBuf>>,
    retain_buffers: Option<bool>,
    in_flight: Option<usize>,
}

static CHOSEN: Mutex<Chosen> = Mutex::new(Chosen {
    cache_dir: None,
    retain_buffers: None,
    in_flight: None,
});

/// A poisoned lock still holds consistent settings (every update is one assignment).
fn chosen() -> MutexGuard<'static, Chosen> {
    CHOSEN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Sets the persistent cache's directory (`None`: no persistent cache), overriding the
/// `SYNTHPOOL_RECORDING_CACHE` environment variable.
///
/// Whoever can write the directory decides which recordings a batch opens, so the drop-ins
/// use it only when it is this process's own: a directory (not a symbolic link) owned by
/// the process's user or root and not writable by group or others, below directories that
/// no other user can replace it in (owned by one of those two, and writable by others only
/// with the sticky bit, as `/var/tmp`). Otherwise they log one warning naming it, its owner
/// and mode, and keep recordings in memory only. A missing directory is made, with mode
/// 0755 whatever the umask (files in it are written 0644); one another user made first is
/// not this process's own. Files in it are opened without following symbolic links.
pub fn set_cache_dir(dir: Option<PathBuf>) {
    chosen().cache_dir = Some(dir);
}

/// The persistent cache's directory: the one set through [`set_cache_dir`], else the
/// `SYNTHPOOL_RECORDING_CACHE` environment variable (`off`: none), else
/// [`DEFAULT_CACHE_DIR`].
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(set) = chosen().cache_dir.clone() {
        return set;
    }
    match std::env::var_os(CACHE_DIR_VARIABLE) {
        Some(dir) if dir == CACHE_OFF => None,
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => Some(PathBuf::from(DEFAULT_CACHE_DIR)),
    }
}

/// Records the choice [`super::set_retain_buffers`] makes (which also frees what is kept
/// when it switches retention off).
pub(crate) fn choose_retain_buffers(retain: bool) {
    chosen().retain_buffers = Some(retain);
}

/// Whether spent vectors are kept: the choice made through [`super::set_retain_buffers`], else
/// whether `SYNTHPOOL_RETAIN_BUFFERS` is `1` (`0`, empty or unset: off; any other value is
/// off too, said once in the log).
pub fn retains_buffers() -> bool {
    if let Some(retain) = chosen().retain_buffers {
        return retain;
    }
    let value = std::env::var_os(RETAIN_BUFFERS_VARIABLE).unwrap_or_default();
    if value == "1" {
        return true;
    }
    if !(value.is_empty() || value == "0") {
        let value = value.to_string_lossy().into_owned();
        warn_once(format!("{RETAIN_BUFFERS_VARIABLE}={value}"), || {
            format!(
                "synthpool: {RETAIN_BUFFERS_VARIABLE}={value:?} is neither 1 nor 0; retention off"
            )
        });
    }
    false
}

/// How many members of a batch may hold synthesized vectors at once, overriding the
/// `SYNTHPOOL_IN_FLIGHT` environment variable: 1 synthesizes each member only once the
/// previous one is proven (a batch holds one member's vectors, as much as a batch of one);
/// 2 (the default) synthesizes the next member while one is proven; the batch size holds
/// them all, as bellperson does. 0 cannot prove anything and is refused.
pub fn set_in_flight(members: usize) -> Result<(), Error> {
    if members == 0 {
        return Err(zero_in_flight("0".into()));
    }
    chosen().in_flight = Some(members);
    Ok(())
}

fn zero_in_flight(value: String) -> Error {
    Error::Setting {
        name: IN_FLIGHT_VARIABLE,
        value,
        expected: "a number of members of at least 1",
    }
}

/// Members in flight: the number set through [`set_in_flight`], else
/// `SYNTHPOOL_IN_FLIGHT` (empty or unset: the default), else [`DEFAULT_IN_FLIGHT`]; an
/// error when the variable is set to anything but a number of at least 1.
pub fn in_flight() -> Result<usize, Error> {
    if let Some(members) = chosen().in_flight {
        return Ok(members);
    }
    let value = std::env::var_os(IN_FLIGHT_VARIABLE).unwrap_or_default();
    if value.is_empty() {
        return Ok(DEFAULT_IN_FLIGHT);
    }
    match value.into_string() {
        Err(value) => Err(zero_in_flight(value.to_string_lossy().into_owned())),
        Ok(value) => match value.trim().parse::<usize>() {
            Ok(members) if members > 0 => Ok(members),
            _ => Err(zero_in_flight(value)),
        },
    }
}

//! What keeps a mapped recording file that shrinks under its mapping from ending the
//! process: reading a page of a mapping past the end of its file raises SIGBUS, whose
//! default action kills the process. A file truncated in place, or replaced on a network
//! file system's server (a stale handle), does that to every process mapping it.
//!
//! A handler, installed once, process-wide, the first time a file is mapped, looks the
//! faulting address up among the mappings registered here. For one of ours, it maps
//! anonymous zero pages over the rest of that mapping (from the faulting page on: what
//! lies past the new end of the file), marks the mapping tripped and returns, so the read
//! is retried and sees zeros; whoever evaluates from the mapping checks the mark after
//! evaluating and returns an error instead of the vectors. Any other SIGBUS goes to the
//! handler that was installed before (Rust's own stack-overflow handler, a Go runtime's
//! under cgo), or, if there was none, to the default action, as if this handler did not
//! exist. The handler runs with `SA_ONSTACK`, as a host runtime such as Go's requires.
//!
//! The handler only reads atomics and calls `mmap`, a system call without locks; it
//! allocates nothing and takes no lock. At most [`SLOTS`] mappings are registered at once;
//! beyond that a file is read into memory instead of mapped.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Mappings registered at once.
const SLOTS: usize = 128;

/// One registered mapping: its range, and whether a fault in it was served with zeros.
struct Slot {
    /// Whether the slot is taken (set before `start`, cleared after it).
    taken: AtomicBool,
    /// First byte; 0 while the slot holds no mapping.
    start: AtomicUsize,
    len: AtomicUsize,
    tripped: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    taken: AtomicBool::new(false),
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    tripped: AtomicBool::new(false),
};

static SLOT_TABLE: [Slot; SLOTS] = [FREE; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(0);

/// The disposition that was in place before ours.
struct Previous(libc::sigaction);

// SAFETY: a `sigaction` is plain data (a handler address, flags, a signal mask), written
// once before the handler that reads it is installed and never changed.
unsafe impl Sync for Previous {}
// SAFETY: as above.
unsafe impl Send for Previous {}

static PREVIOUS: OnceLock<Previous> = OnceLock::new();

/// A registered mapping; dropping it unregisters the range (before it is unmapped).
#[derive(Debug)]
pub(super) struct Guarded {
    slot: usize,
}

impl Guarded {
    /// Whether a read past the end of the file was served with zeros.
    pub(super) fn tripped(&self) -> bool {
        SLOT_TABLE[self.slot].tripped.load(Ordering::Acquire)
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        let slot = &SLOT_TABLE[self.slot];
        slot.start.store(0, Ordering::Release);
        slot.taken.store(false, Ordering::Release);
    }
}

/// Registers `len` bytes from `start` (a live mapping of a file), installing the handler
/// the first time; `None` when every slot is taken or the handler cannot be installed.
pub(super) fn register(start: usize, len: usize) -> Option<Guarded> {
    if !installed() {
        return None;
    }
    let slot = SLOT_TABLE.iter().position(|slot| {
        slot.taken
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    })?;
    let entry = &SLOT_TABLE[slot];
    entry.len.store(len, Ordering::Release);
    entry.tripped.store(false, Ordering::Release);
    entry.start.store(start, Ordering::Release);
    Some(Guarded { slot })
}

/// Installs the handler once; whether it is in place.
fn installed() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page <= 0 {
            return false;
        }
        PAGE.store(page as usize, Ordering::Release);
        // SAFETY: an all-zero `sigaction` is a valid value (no handler, no flags, an empty
        // mask), which the calls below fill in.
        let mut ours: libc::sigaction = unsafe { std::mem::zeroed() };
        ours.sa_sigaction = on_sigbus as *const () as usize;
        ours.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        // SAFETY: `sa_mask` is a valid signal set to initialize.
        unsafe { libc::sigemptyset(&mut ours.sa_mask) };
        // SAFETY: as for `ours`.
        let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
        // Read the disposition first and keep it before ours can run: the handler chains to
        // it.
        // SAFETY: a null new action only reads the current one into `previous`.
        if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) } != 0 {
            return false;
        }
        let _ = PREVIOUS.set(Previous(previous));
        // SAFETY: `ours` is a valid disposition whose handler is async-signal-safe (see the
        // module documentation).
        unsafe { libc::sigaction(libc::SIGBUS, &ours, std::ptr::null_mut()) == 0 }
    })
}

/// The SIGBUS handler (see the module documentation).
extern "C" fn on_sigbus(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid `siginfo_t` to a handler installed with SA_SIGINFO.
    let address = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Acquire);
    for slot in &SLOT_TABLE {
        let start = slot.start.load(Ordering::Acquire);
        if start == 0 || address < start {
            continue;
        }
        let len = slot.len.load(Ordering::Acquire);
        if address - start >= len {
            continue;
        }
        let from = address & !(page - 1);
        let end = (start + len).div_ceil(page) * page;
        // SAFETY: `from..end` lies within a live mapping of ours (registered while mapped,
        // unregistered before it is unmapped, and nothing reads it then), which this
        // replaces with zero-filled private pages of the same protection; no Rust value
        // lives in it other than the plain integers read from it.
        let zeros = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                end - from,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if zeros != libc::MAP_FAILED {
            slot.tripped.store(true, Ordering::Release);
            return;
        }
        break;
    }
    chain(signal, info, context);
}

/// Hands a SIGBUS that is not ours to the disposition before ours.
fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let previous = PREVIOUS.get().map(|p| p.0);
    match previous {
        Some(previous)
            if previous.sa_sigaction != libc::SIG_DFL && previous.sa_sigaction != libc::SIG_IGN =>
        {
            if previous.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: with SA_SIGINFO, the address is a three-argument handler that
                // was installed for this signal before ours.
                let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    unsafe { std::mem::transmute(previous.sa_sigaction) };
                handler(signal, info, context);
            } else {
                // SAFETY: without it, a one-argument handler, installed as above.
                let handler: extern "C" fn(libc::c_int) =
                    unsafe { std::mem::transmute(previous.sa_sigaction) };
                handler(signal);
            }
        }
        _ => {
            // The default action: restored, then the faulting read repeats and ends the
            // process as it would have without us.
            // SAFETY: an all-zero `sigaction` with SIG_DFL is the default disposition.
            let mut default: libc::sigaction = unsafe { std::mem::zeroed() };
            default.sa_sigaction = libc::SIG_DFL;
            // SAFETY: a valid disposition; sigaction is async-signal-safe.
            unsafe { libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut()) };
        }
    }
}

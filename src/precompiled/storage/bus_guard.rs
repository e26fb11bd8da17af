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
//! evaluating and returns an error instead of the vectors. Any other SIGBUS is handled as
//! the disposition before ours says, as if this handler did not exist: a handler installed
//! before (Rust's own stack-overflow handler, a Go runtime's under cgo) is called; a signal
//! sent by a process (`kill`, `tgkill`, `sigqueue`: a code of zero or less) is ignored
//! where that disposition ignored it and ends the process where it was the default; a
//! fault outside our mappings ends the process (the kernel does not let a fault be
//! ignored). A handler installed after ours replaces it, and is left alone. The handler
//! runs with `SA_ONSTACK`, as a host runtime such as Go's requires.
//!
//! The handler only reads atomics and calls `mmap`, a system call without locks; it
//! allocates nothing and takes no lock. At most [`SLOTS`] mappings are registered at once;
//! beyond that a file is read into memory instead of mapped.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Mappings registered at once.
const SLOTS: usize = 128;

/// One registered mapping: its range, and whether a fault in it was served with zeros.
struct GuardSlot {
    /// Whether the slot is taken (set before `start`, cleared after it).
    taken: AtomicBool,
    /// First byte; 0 while the slot holds no mapping.
    start: AtomicUsize,
    len: AtomicUsize,
    tripped: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: GuardSlot = GuardSlot {
    taken: AtomicBool::new(false),
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    tripped: AtomicBool::new(false),
};

static SLOT_TABLE: [GuardSlot; SLOTS] = [FREE; SLOTS];
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
pub(crate) struct Guarded {
    slot: usize,
}

impl Guarded {
    /// Whether a read past the end of the file was served with zeros.
    pub(crate) fn tripped(&self) -> bool {
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
pub(crate) fn register(start: usize, len: usize) -> Option<Guarded> {
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
    let (code, address) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // Sent by a process, not raised by a fault: no mapping of ours is involved, whatever
    // address the sender's `siginfo` holds.
    let sent = code <= 0;
    if !sent && serve(address) {
        return;
    }
    chain(signal, info, context, sent);
}

/// Whether a fault at `address` was in a mapping of ours, now served with zero pages.
fn serve(address: usize) -> bool {
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
            return true;
        }
        return false;
    }
    false
}

/// Hands a SIGBUS that is not ours to the disposition before ours; `sent`: a process sent
/// it (no read is waiting to be retried).
fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void, sent: bool) {
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
        // A signal sent to a process that ignored it: ignored still.
        Some(previous) if sent && previous.sa_sigaction == libc::SIG_IGN => {}
        _ => {
            // The default action: restored, then the faulting read repeats, or the sent
            // signal is raised again (delivered once this handler returns, SIGBUS being
            // blocked while it runs), and ends the process as it would have without us.
            // SAFETY: an all-zero `sigaction` with SIG_DFL is the default disposition.
            let mut default: libc::sigaction = unsafe { std::mem::zeroed() };
            default.sa_sigaction = libc::SIG_DFL;
            // SAFETY: a valid disposition; sigaction is async-signal-safe.
            unsafe { libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut()) };
            if sent {
                // SAFETY: raise is async-signal-safe.
                unsafe { libc::raise(signal) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The handler is process-wide and installed once, so each case runs in a child process
    //! of its own: this test binary again, running [`child`] with the case named in
    //! [`CASE`].

    use super::*;
    use crate::precompiled::tests::Square;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Output};

    const CASE: &str = "SYNTHPOOL_BUS_GUARD_CASE";
    /// What a child prints when its case ran to the end.
    const DONE: &str = "bus-guard case done";

    static CALLED: AtomicUsize = AtomicUsize::new(0);

    extern "C" fn counting(_: libc::c_int) {
        CALLED.fetch_add(1, Ordering::SeqCst);
    }

    fn set_disposition(handler: libc::sighandler_t) {
        // SAFETY: an all-zero `sigaction` is valid; the handler is SIG_DFL, SIG_IGN or
        // `counting`, which only touches an atomic.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler;
            libc::sigemptyset(&mut action.sa_mask);
            assert_eq!(
                libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()),
                0
            );
        }
    }

    fn current_handler() -> libc::sighandler_t {
        // SAFETY: a null new action only reads the current one.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut action);
            action.sa_sigaction
        }
    }

    /// Sends this process SIGBUS the way `how` says, as another process could.
    fn send(how: &str) {
        // SAFETY: plain system calls on this process's own id.
        let sent = unsafe {
            let pid = libc::getpid();
            match how {
                "kill" => libc::kill(pid, libc::SIGBUS),
                "tgkill" => {
                    let tid = libc::syscall(libc::SYS_gettid);
                    libc::syscall(libc::SYS_tgkill, pid, tid, libc::SIGBUS) as libc::c_int
                }
                "sigqueue" => libc::sigqueue(
                    pid,
                    libc::SIGBUS,
                    libc::sigval {
                        sival_ptr: std::ptr::null_mut(),
                    },
                ),
                other => panic!("no way to send {other}"),
            }
        };
        assert_eq!(sent, 0, "{how}");
    }

    /// Waits for the counting handler to have run `times` times (a signal sent to the
    /// process may be delivered on any of its threads).
    fn handler_ran(times: usize) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while CALLED.load(Ordering::SeqCst) < times {
            if std::time::Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        true
    }

    /// A file of two pages mapped by the test (not registered with the guard).
    fn mapped_file(name: &str) -> (std::fs::File, *const u8) {
        let path =
            std::env::temp_dir().join(format!("synthpool-bus-guard-{}-{name}", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        file.set_len(8192).unwrap();
        use std::os::unix::io::AsRawFd;
        // SAFETY: a fresh read-only mapping of a file we hold, never unmapped while the
        // child runs.
        let start = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                8192,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(start, libc::MAP_FAILED);
        (file, start as *const u8)
    }

    fn run_case(case: &str) {
        match case.split_once(':') {
            // The disposition before ours was the default: a signal sent ends the process.
            Some(("default", how)) => {
                set_disposition(libc::SIG_DFL);
                assert!(installed());
                send(how);
                std::thread::sleep(std::time::Duration::from_secs(5));
            }
            // Ignored before ours: ignored, however often it is sent.
            Some(("ignored", how)) => {
                set_disposition(libc::SIG_IGN);
                assert!(installed());
                send(how);
                send(how);
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
            // A handler before ours: called for each signal sent.
            Some(("handler", how)) => {
                set_disposition(counting as *const () as libc::sighandler_t);
                assert!(installed());
                send(how);
                assert!(handler_ran(1), "the earlier handler was not called");
                send(how);
                assert!(handler_ran(2), "the earlier handler was not called again");
            }
            _ => match case {
                // A handler installed after ours stays in place, and is the one called.
                "after" => {
                    set_disposition(libc::SIG_DFL);
                    assert!(installed());
                    set_disposition(counting as *const () as libc::sighandler_t);
                    let (_file, start) = mapped_file("after");
                    let guard = register(start as usize, 8192).expect("a slot");
                    assert_eq!(current_handler(), counting as *const () as usize);
                    send("kill");
                    assert!(handler_ran(1), "the later handler was not called");
                    drop(guard);
                }
                // A fault in a mapping that is not ours ends the process as it would have
                // without the guard.
                "foreign fault" => {
                    set_disposition(libc::SIG_DFL);
                    assert!(installed());
                    let (file, start) = mapped_file("foreign");
                    file.set_len(0).unwrap();
                    // SAFETY: a read of the test's own live mapping; past the file's new
                    // end it raises SIGBUS, which is what this case is about.
                    let byte = unsafe { std::ptr::read_volatile(start.add(4096)) };
                    println!("read {byte} past the end of a foreign file");
                }
                // A fault in a mapping of ours reads zeros and trips it.
                "ours" => {
                    let (file, start) = mapped_file("ours");
                    let guard = register(start as usize, 8192).expect("a slot");
                    file.set_len(4096).unwrap();
                    // SAFETY: a read of a registered live mapping past the file's end,
                    // served with zeros by the handler.
                    let byte = unsafe { std::ptr::read_volatile(start.add(4096 + 17)) };
                    assert_eq!(byte, 0);
                    assert!(guard.tripped());
                }
                // Every slot taken: no more registrations until one is given back, and a
                // recording opened meanwhile is read into memory instead, and evaluates.
                "slots" => {
                    let (_file, start) = mapped_file("slots");
                    let take = || register(start as usize, 8192);
                    let mut guards: Vec<Guarded> =
                        std::iter::from_fn(take).take(SLOTS + 1).collect();
                    assert_eq!(guards.len(), SLOTS);
                    let path = std::env::temp_dir().join(format!(
                        "synthpool-bus-guard-{}-slots.rec",
                        std::process::id()
                    ));
                    let recording = crate::precompiled::Recording::record(Square).unwrap();
                    recording.save(&path).unwrap();
                    let opened = crate::precompiled::Recording::map_unverified(&path).unwrap();
                    std::fs::remove_file(&path).unwrap();
                    assert!(opened.mapping.is_none(), "mapped with no slot free");
                    let vectors = opened.synthesize(Square).unwrap();
                    assert_eq!(vectors, crate::synthesize::synthesize(Square).unwrap());
                    guards.pop();
                    guards.push(take().expect("the slot given back"));
                    assert!(take().is_none(), "every slot taken again");
                }
                other => panic!("no case {other}"),
            },
        }
        println!("{DONE}");
    }

    /// The child's entry: runs the case [`CASE`] names, if any.
    #[test]
    fn child() {
        if let Ok(case) = std::env::var(CASE) {
            run_case(&case);
        }
    }

    fn in_a_child(case: &str) -> Output {
        // This module's path within the crate, as the test harness names its tests.
        let here = module_path!().split_once("::").map_or("", |(_, path)| path);
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &format!("{here}::child"),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CASE, case)
            .output()
            .unwrap()
    }

    fn finished(case: &str) {
        let output = in_a_child(case);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains(DONE),
            "{case}: {:?}\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn killed_by_sigbus(case: &str) {
        let output = in_a_child(case);
        assert_eq!(
            output.status.signal(),
            Some(libc::SIGBUS),
            "{case}: {:?}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout)
        );
    }

    #[test]
    fn signals_sent_act_as_the_disposition_before_ours_says() {
        for how in ["kill", "tgkill", "sigqueue"] {
            killed_by_sigbus(&format!("default:{how}"));
            finished(&format!("ignored:{how}"));
            finished(&format!("handler:{how}"));
        }
    }

    #[test]
    fn a_handler_installed_after_ours_is_left_alone() {
        finished("after");
    }

    #[test]
    fn faults_are_served_in_our_mappings_only() {
        finished("ours");
        killed_by_sigbus("foreign fault");
    }

    #[test]
    fn the_slot_table_holds_its_size_and_frees_slots() {
        finished("slots");
    }
}

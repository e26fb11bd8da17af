//! Reading the cache directory in bounded time: each read runs on a thread of its own while
//! the batch waits for it to make progress. A read that goes [`STALL`] without any (a hung
//! network mount, a disk that stopped answering) is given up, and what it was reading is
//! treated as absent: the batch records anew instead of waiting forever. The thread itself
//! cannot be stopped; it is left to finish or hang, and its result, if any, is dropped.

use std::sync::mpsc;
use std::time::Duration;

/// How long a read of the cache may go without progress: far longer than any working disk
/// or mount takes for one step of a read (at most 8 MiB, see `progress`), far shorter than
/// a proving deadline.
pub(crate) const STALL: Duration = Duration::from_secs(30);

/// Why a read gave no result.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum GaveUp {
    /// No progress for the stall limit.
    Stalled(Duration),
    /// The reading thread could not be started, or ended without a result (it panicked).
    NoThread,
}

impl std::fmt::Display for GaveUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GaveUp::Stalled(stall) => write!(f, "no progress reading it for {stall:?}"),
            GaveUp::NoThread => f.write_str("the thread reading it failed"),
        }
    }
}

enum Message<T> {
    Progress,
    Done(T),
}

/// Runs `read` on a thread of its own, which calls the function it is given at each step
/// of progress, and returns its result unless `stall` passes between two steps (or before
/// the first, or between the last and the result).
pub(crate) fn watched<T, F>(stall: Duration, read: F) -> Result<T, GaveUp>
where
    T: Send + 'static,
    F: FnOnce(&dyn Fn()) -> T + Send + 'static,
{
    let (sender, receiver) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("synthpool-cache-read".into())
        .spawn(move || {
            let progress = || {
                let _ = sender.send(Message::Progress);
            };
            let result = read(&progress);
            // The batch may have given up on it: then nobody is listening.
            let _ = sender.send(Message::Done(result));
        });
    if spawned.is_err() {
        return Err(GaveUp::NoThread);
    }
    loop {
        match receiver.recv_timeout(stall) {
            Ok(Message::Progress) => {}
            Ok(Message::Done(result)) => return Ok(result),
            Err(mpsc::RecvTimeoutError::Timeout) => return Err(GaveUp::Stalled(stall)),
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(GaveUp::NoThread),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORT: Duration = Duration::from_millis(200);
    const LONG: Duration = Duration::from_secs(2);

    #[test]
    fn a_read_that_never_progresses_is_given_up() {
        let (_never, blocked) = mpsc::channel::<()>();
        let started = std::time::Instant::now();
        let outcome = watched(SHORT, move |_| blocked.recv().is_ok());
        assert_eq!(outcome, Err(GaveUp::Stalled(SHORT)));
        assert!(started.elapsed() < 50 * SHORT, "{:?}", started.elapsed());
    }

    #[test]
    fn a_slow_read_that_keeps_progressing_finishes() {
        // Longer than the stall limit in all, never a fortieth of it without progress.
        let outcome = watched(LONG, |progress| {
            for _ in 0..60 {
                std::thread::sleep(LONG / 40);
                progress();
            }
            7
        });
        assert_eq!(outcome, Ok(7));
    }

    #[test]
    fn a_read_that_panics_gives_no_result_and_no_panic() {
        // A stall limit far beyond the panic's unwinding (a backtrace takes seconds).
        let outcome: Result<(), _> = watched(STALL, |_| panic!("the disk is on fire"));
        assert_eq!(outcome, Err(GaveUp::NoThread));
    }
}

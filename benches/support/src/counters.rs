//! Counters around a region of code, covering every thread of the process: the bench's
//! work runs on rayon threads as much as on the calling one.
//!
//! - Software figures come from the kernel's per-process accounting: the process CPU clock
//!   (`CLOCK_PROCESS_CPUTIME_ID`, all threads) and `getrusage(RUSAGE_SELF)`'s page faults.
//! - Hardware figures come from one perf-event group per thread that does the work: the
//!   calling thread and every worker of the rayon pools given to [`Counters::open`], summed.
//!   Hardware events are often unavailable (virtual machines without a PMU: ENOENT; hosts
//!   with `perf_event_paranoid` too high: EACCES); then only the software figures are
//!   reported and [`Counters::unavailable`] says why, once, in plain words.

#![allow(unsafe_code)]

use std::io;
use std::sync::Mutex;

use perf_event::events::{Cache, CacheOp, CacheResult, Event, Hardware, WhichCache};
use perf_event::{Builder, Counter, Group};

/// One counted figure; `scaled` when the kernel multiplexed it and the count was scaled by
/// time enabled / time running.
#[derive(Clone, Copy, Debug, Default)]
pub struct Figure {
    /// The count (scaled when `scaled`).
    pub value: f64,
    /// Whether the count was multiplexed and scaled.
    pub scaled: bool,
}

/// Names of the hardware events, in report order.
pub const HARDWARE: [&str; 7] = [
    "cycles",
    "instructions",
    "cache_references",
    "cache_misses",
    "l1d_read_misses",
    "branch_instructions",
    "branch_misses",
];
/// Names of the software figures.
pub const SOFTWARE: [&str; 2] = ["task_clock_ns", "page_faults"];

fn hardware_event(name: &str) -> Event {
    match name {
        "cycles" => Hardware::CPU_CYCLES.into(),
        "instructions" => Hardware::INSTRUCTIONS.into(),
        "cache_references" => Hardware::CACHE_REFERENCES.into(),
        "cache_misses" => Hardware::CACHE_MISSES.into(),
        "l1d_read_misses" => Cache {
            which: WhichCache::L1D,
            operation: CacheOp::READ,
            result: CacheResult::MISS,
        }
        .into(),
        "branch_instructions" => Hardware::BRANCH_INSTRUCTIONS.into(),
        _ => Hardware::BRANCH_MISSES.into(),
    }
}

/// The hardware events of one thread, read as a group.
struct ThreadGroup {
    group: Group,
    members: Vec<(&'static str, Counter)>,
}

impl ThreadGroup {
    /// Opens the group on the calling thread.
    fn open() -> io::Result<ThreadGroup> {
        let mut group = Group::new()?;
        let mut members = Vec::new();
        for name in HARDWARE {
            let counter = Builder::new()
                .group(&mut group)
                .kind(hardware_event(name))
                .build()?;
            members.push((name, counter));
        }
        Ok(ThreadGroup { group, members })
    }
}

/// What the kernel accounts for the whole process: CPU time (ns) and page faults.
fn process_accounting() -> (f64, f64) {
    let mut clock = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock` is a valid, writable timespec; CLOCK_PROCESS_CPUTIME_ID exists on
    // every Linux the bench runs on, and a failure leaves `clock` at zero.
    let clock_ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut clock) };
    // SAFETY: `rusage` is plain data for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage; a failure leaves it zeroed.
    let usage_ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let ns = if clock_ok == 0 {
        clock.tv_sec as f64 * 1e9 + clock.tv_nsec as f64
    } else {
        0.0
    };
    let faults = if usage_ok == 0 {
        (usage.ru_minflt + usage.ru_majflt) as f64
    } else {
        0.0
    };
    (ns, faults)
}

/// Counters ready to count regions of work.
pub struct Counters {
    groups: Vec<ThreadGroup>,
    /// Why hardware counters are missing, when they are.
    pub unavailable: Option<String>,
}

fn explain(error: &io::Error) -> String {
    match error.raw_os_error() {
        Some(2) | Some(95) => format!(
            "hardware performance counters are not available on this machine ({error}); \
             a virtual machine without a virtual PMU gives this. Run on bare metal or enable \
             the vPMU to get cycles, IPC and cache/branch misses; scripts/perf-stat.sh --sim \
             gives simulated ones through cachegrind"
        ),
        Some(13) | Some(1) => format!(
            "hardware performance counters are not permitted ({error}); lower \
             /proc/sys/kernel/perf_event_paranoid (e.g. `sysctl kernel.perf_event_paranoid=1`) \
             or run with CAP_PERFMON"
        ),
        _ => format!("hardware performance counters could not be opened ({error})"),
    }
}

impl Counters {
    /// Opens hardware groups on the calling thread, on every worker of the global rayon
    /// pool and on every worker of `pools`; without hardware events, counts the software
    /// figures only and says why.
    pub fn open(pools: &[&rayon::ThreadPool]) -> Counters {
        let opened = Mutex::new(Vec::new());
        let open_here = || opened.lock().unwrap().push(ThreadGroup::open());
        open_here();
        rayon::broadcast(|_| open_here());
        for pool in pools {
            pool.broadcast(|_| open_here());
        }
        let results: io::Result<Vec<ThreadGroup>> =
            opened.into_inner().unwrap().into_iter().collect();
        match results {
            Ok(groups) => Counters {
                groups,
                unavailable: None,
            },
            Err(error) => Counters {
                groups: Vec::new(),
                unavailable: Some(explain(&error)),
            },
        }
    }

    /// Counts `work` and returns its result with every figure, by name, summed over the
    /// process (software) or the counted threads (hardware).
    pub fn measure<T>(&mut self, work: impl FnOnce() -> T) -> (T, Vec<(&'static str, Figure)>) {
        let started = self
            .groups
            .iter_mut()
            .all(|g| g.group.reset().and_then(|_| g.group.enable()).is_ok());
        let (clock_before, faults_before) = process_accounting();
        let result = work();
        let (clock_after, faults_after) = process_accounting();
        let mut figures = vec![
            (
                "task_clock_ns",
                Figure {
                    value: clock_after - clock_before,
                    scaled: false,
                },
            ),
            (
                "page_faults",
                Figure {
                    value: faults_after - faults_before,
                    scaled: false,
                },
            ),
        ];
        if started && !self.groups.is_empty() {
            if let Some(hardware) = self.read_hardware() {
                figures.extend(hardware);
            }
        }
        (result, figures)
    }

    /// The hardware figures summed over every group, scaled where multiplexed.
    fn read_hardware(&mut self) -> Option<Vec<(&'static str, Figure)>> {
        let mut sums: Vec<(&'static str, Figure)> = HARDWARE
            .iter()
            .map(|&name| (name, Figure::default()))
            .collect();
        for thread in &mut self.groups {
            thread.group.disable().ok()?;
            let counts = thread.group.read().ok()?;
            let (enabled, running) = (counts.time_enabled(), counts.time_running());
            let scaled = running > 0 && running < enabled;
            let factor = if scaled {
                enabled as f64 / running as f64
            } else {
                1.0
            };
            for ((_, counter), (_, sum)) in thread.members.iter().zip(&mut sums) {
                if let Some(&raw) = counts.get(counter) {
                    sum.value += raw as f64 * factor;
                    sum.scaled |= scaled;
                }
            }
        }
        Some(sums)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    fn figure(figures: &[(&str, Figure)], name: &str) -> f64 {
        figures
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("no {name} in {figures:?}"))
            .1
            .value
    }

    /// CPU time of the calling thread so far.
    fn thread_cpu_ns() -> f64 {
        let mut clock = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `clock` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on
        // every Linux the bench runs on.
        let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut clock) };
        assert_eq!(status, 0, "{}", io::Error::last_os_error());
        clock.tv_sec as f64 * 1e9 + clock.tv_nsec as f64
    }

    #[test]
    fn figures_cover_the_work_of_every_rayon_thread() {
        let threads = rayon::current_num_threads();
        let mut counters = Counters::open(&[]);
        // CPU-bound work on every worker, and fresh memory touched on them; each task reports
        // the CPU time its own thread spent, so the check holds however loaded the machine is.
        let (per_task, figures) = counters.measure(|| {
            (0..threads)
                .into_par_iter()
                .map(|t| {
                    let before = thread_cpu_ns();
                    let mut x = t as u64;
                    for i in 0..20_000_000u64 {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
                    }
                    let touched = std::hint::black_box(vec![1u8; 8 << 20]);
                    let check = x.wrapping_add(touched.iter().map(|&b| u64::from(b)).sum::<u64>());
                    (thread_cpu_ns() - before, check)
                })
                .collect::<Vec<_>>()
        });
        let worked: f64 = per_task.iter().map(|(ns, _)| ns).sum();
        assert!(per_task.iter().all(|&(_, check)| check != 0));
        let clock = figure(&figures, "task_clock_ns");
        let faults = figure(&figures, "page_faults");
        println!("{threads} threads: task clock {clock:.0} ns, tasks' own CPU time {worked:.0} ns, {faults} page faults");
        // The process clock covers every task, whichever thread ran it.
        assert!(
            clock >= 0.95 * worked,
            "task clock {clock} below the tasks' {worked}"
        );
        // 8 MiB touched per task: at least a page fault per 64 KiB of it.
        assert!(faults >= (threads * 128) as f64, "{faults} page faults");
        match &counters.unavailable {
            None => assert!(figure(&figures, "instructions") > 1e8),
            Some(reason) => assert!(reason.contains("hardware performance counters"), "{reason}"),
        }
    }

    #[test]
    fn explanations_name_the_fix() {
        let missing = explain(&io::Error::from_raw_os_error(2));
        assert!(
            missing.contains("not available") && missing.contains("--sim"),
            "{missing}"
        );
        let denied = explain(&io::Error::from_raw_os_error(13));
        assert!(denied.contains("perf_event_paranoid"), "{denied}");
    }
}

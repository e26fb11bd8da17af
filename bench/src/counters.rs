//! Hardware and software counters around a region of code, read as one perf-event group;
//! the synth_only bench counts each synthesis with it.
//!
//! Hardware events are often unavailable (virtual machines without a PMU: ENOENT; hosts
//! with `perf_event_paranoid` too high: EACCES). Then the group holds the software events
//! only, and [`Counters::unavailable`] says why, once, in plain words.

use std::io;

use perf_event::events::{Cache, CacheOp, CacheResult, Event, Hardware, Software, WhichCache};
use perf_event::{Builder, Counter, Group};

/// One counted figure; `scaled` when the kernel multiplexed it and the count was scaled
/// by time enabled / time running.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reading {
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
/// Names of the software events.
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

fn software_event(name: &str) -> Event {
    match name {
        "task_clock_ns" => Software::TASK_CLOCK.into(),
        _ => Software::PAGE_FAULTS.into(),
    }
}

/// A perf-event group ready to count one region.
pub struct Counters {
    group: Option<Group>,
    members: Vec<(&'static str, Counter)>,
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
    /// Opens the full group, or the software-only group when hardware events fail; when even
    /// those fail, counts nothing and says so.
    pub fn open() -> Counters {
        match Self::build(true) {
            Ok(counters) => counters,
            Err(error) => {
                let reason = explain(&error);
                match Self::build(false) {
                    Ok(mut counters) => {
                        counters.unavailable = Some(reason);
                        counters
                    }
                    Err(error) => Counters {
                        group: None,
                        members: Vec::new(),
                        unavailable: Some(format!(
                            "{reason}; software counters failed too ({error})"
                        )),
                    },
                }
            }
        }
    }

    fn build(with_hardware: bool) -> io::Result<Counters> {
        let mut group = Group::new()?;
        let mut members = Vec::new();
        if with_hardware {
            for name in HARDWARE {
                let counter = Builder::new()
                    .group(&mut group)
                    .kind(hardware_event(name))
                    .build()?;
                members.push((name, counter));
            }
        }
        for name in SOFTWARE {
            let counter = Builder::new()
                .group(&mut group)
                .kind(software_event(name))
                .build()?;
            members.push((name, counter));
        }
        Ok(Counters {
            group: Some(group),
            members,
            unavailable: None,
        })
    }

    /// Counts `work` and returns its result with every reading, by event name.
    pub fn measure<T>(&mut self, work: impl FnOnce() -> T) -> (T, Vec<(&'static str, Reading)>) {
        let Some(group) = self.group.as_mut() else {
            return (work(), Vec::new());
        };
        let started = group.reset().and_then(|_| group.enable()).is_ok();
        let result = work();
        if !started || group.disable().is_err() {
            return (result, Vec::new());
        }
        let Ok(counts) = group.read() else {
            return (result, Vec::new());
        };
        let (enabled, running) = (counts.time_enabled(), counts.time_running());
        let scaled = running > 0 && running < enabled;
        let factor = if scaled {
            enabled as f64 / running as f64
        } else {
            1.0
        };
        let readings = self
            .members
            .iter()
            .filter_map(|(name, counter)| {
                counts.get(counter).map(|&raw| {
                    (
                        *name,
                        Reading {
                            value: raw as f64 * factor,
                            scaled,
                        },
                    )
                })
            })
            .collect();
        (result, readings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_never_fails_and_says_why_hardware_is_missing() {
        let mut counters = Counters::open();
        let (sum, readings) = counters.measure(|| (0..100_000u64).sum::<u64>());
        assert_eq!(sum, 4_999_950_000);
        match &counters.unavailable {
            // Hardware events opened: every event is read.
            None => assert_eq!(readings.len(), HARDWARE.len() + SOFTWARE.len()),
            Some(reason) => {
                assert!(reason.contains("hardware performance counters"), "{reason}");
                assert!(readings.iter().all(|(name, _)| SOFTWARE.contains(name)));
            }
        }
        println!(
            "unavailable: {:?}; readings: {readings:?}",
            counters.unavailable
        );
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

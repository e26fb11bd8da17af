//! The synth_only report: one table per circuit for people, JSON for scripts.
//!
//! JSON schema ([`SCHEMA`] = 5; 2 added the pre-compiled figures, 3 their nonzeros per
//! constraint, 4 the batches, 5 the batches of fresh processes and `over_warm`): an object
//! with `schema`, `allocator` ("system" or "jemalloc"), `hardware_counters` (null, or why
//! hardware counters were unavailable), `rows`, one per circuit and variant, with exactly
//! the fields of [`Row`], and `batches`, one per batch proved, with exactly the fields of
//! [`BatchRow`] (empty when the batch section did not run). Optional figures are null when
//! not measured. Field names are stable; a change bumps [`SCHEMA`].

use std::fmt::Write;
use std::io;
use std::path::Path;

use serde::Serialize;

use crate::batches::BatchRow;

/// Version of the JSON layout.
pub const SCHEMA: u32 = 5;

/// One circuit synthesized with one variant.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Row {
    /// The workload, with its size.
    pub circuit: String,
    /// The variant's name.
    pub variant: &'static str,
    /// What the variant changes.
    pub description: &'static str,
    /// Constraints synthesized (per-input constraints included).
    pub constraints: usize,
    /// Median wall time per constraint.
    pub ns_per_constraint: f64,
    /// Baseline time over this variant's time (above 1: faster).
    pub ratio_to_baseline: Option<f64>,
    /// Hardware instructions per constraint.
    pub instructions_per_constraint: Option<f64>,
    /// Instructions per cycle.
    pub ipc: Option<f64>,
    /// Cache misses per cache reference.
    pub cache_miss_rate: Option<f64>,
    /// L1 data read misses per constraint.
    pub l1d_misses_per_constraint: Option<f64>,
    /// Branch misses per branch instruction.
    pub branch_miss_rate: Option<f64>,
    /// Task clock of the counted synthesis, in nanoseconds.
    pub task_clock_ns: Option<f64>,
    /// Page faults of the counted synthesis.
    pub page_faults: Option<f64>,
    /// Whether the kernel multiplexed the counters (figures scaled by enabled/running time).
    pub counters_scaled: bool,
    /// Allocator calls per constraint.
    pub allocations_per_constraint: f64,
    /// Bytes allocated per constraint.
    pub bytes_per_constraint: f64,
    /// Fraction of LC buffers served by the pool, when the pool is on.
    pub pool_hit_rate: Option<f64>,
    /// Pre-compiled variants: the one-off recording, in milliseconds.
    pub record_ms: Option<f64>,
    /// Pre-compiled variants: witness generation per constraint.
    pub witness_ns_per_constraint: Option<f64>,
    /// Pre-compiled variants: evaluation per constraint.
    pub evaluate_ns_per_constraint: Option<f64>,
    /// Pre-compiled variants: bytes per nonzero of the recorded matrices.
    pub bytes_per_nonzero: Option<f64>,
    /// Pre-compiled variants: nonzero terms per constraint (A, B and C together), what
    /// evaluation's instructions per nonzero are counted against.
    pub nonzeros_per_constraint: Option<f64>,
    /// Pre-compiled variants: distinct coefficients.
    pub dictionary_len: Option<usize>,
}

/// The whole report.
#[derive(Serialize)]
pub struct Report<'a> {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The allocator the figures were taken with.
    pub allocator: &'static str,
    /// Why hardware counters are missing, when they are.
    pub hardware_counters: Option<&'a str>,
    /// The measurements.
    pub rows: &'a [Row],
    /// The batches proved.
    pub batches: &'a [BatchRow],
}

fn cell(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "n/a".to_string(), |v| format!("{v:.digits$}"))
}

impl Report<'_> {
    /// The tables, one per circuit in order of first appearance.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let mut circuits: Vec<&str> = self.rows.iter().map(|r| r.circuit.as_str()).collect();
        circuits.dedup();
        let name = self
            .rows
            .iter()
            .map(|r| r.variant.len())
            .chain(["variant".len()])
            .max()
            .unwrap_or_default();
        for circuit in circuits {
            let rows = || self.rows.iter().filter(move |r| r.circuit == circuit);
            let constraints = rows().next().map_or(0, |r| r.constraints);
            // Writing to a String cannot fail.
            let _ = writeln!(out, "\n{circuit}: {constraints} constraints");
            let _ = writeln!(
                out,
                "{:<name$} {:>9} {:>7} {:>9} {:>6} {:>8} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8} {:>8}",
                "variant",
                "ns/cons",
                "ratio",
                "instr/c",
                "IPC",
                "cache%",
                "L1d/c",
                "br-miss%",
                "alloc/c",
                "bytes/c",
                "pool-hit",
                "task-ms",
                "faults/c"
            );
            for r in rows() {
                let _ = writeln!(
                    out,
                    "{:<name$} {:>9.1} {:>7} {:>9} {:>6} {:>8} {:>9} {:>8} {:>8.3} {:>9.1} {:>8} {:>8} {:>8}{}",
                    r.variant,
                    r.ns_per_constraint,
                    cell(r.ratio_to_baseline, 3),
                    cell(r.instructions_per_constraint, 0),
                    cell(r.ipc, 2),
                    cell(r.cache_miss_rate.map(|x| 100.0 * x), 2),
                    cell(r.l1d_misses_per_constraint, 2),
                    cell(r.branch_miss_rate.map(|x| 100.0 * x), 2),
                    r.allocations_per_constraint,
                    r.bytes_per_constraint,
                    cell(r.pool_hit_rate, 4),
                    cell(r.task_clock_ns.map(|ns| ns / 1e6), 1),
                    cell(r.page_faults.map(|f| f / r.constraints.max(1) as f64), 4),
                    if r.counters_scaled { "  (scaled)" } else { "" }
                );
            }
        }
        let prepared: Vec<&Row> = self.rows.iter().filter(|r| r.record_ms.is_some()).collect();
        if !prepared.is_empty() {
            let _ = writeln!(
                out,
                "\npre-compiled: {:<16} {:<name$} {:>10} {:>10} {:>10} {:>8} {:>6} {:>6}",
                "circuit", "variant", "record ms", "witness/c", "eval/c", "B/nnz", "nnz/c", "dict"
            );
            for r in prepared {
                let _ = writeln!(
                    out,
                    "              {:<16} {:<name$} {:>10} {:>10} {:>10} {:>8} {:>6} {:>6}",
                    r.circuit,
                    r.variant,
                    cell(r.record_ms, 0),
                    cell(r.witness_ns_per_constraint, 1),
                    cell(r.evaluate_ns_per_constraint, 1),
                    cell(r.bytes_per_nonzero, 2),
                    cell(r.nonzeros_per_constraint, 2),
                    r.dictionary_len.map_or("n/a".into(), |d| d.to_string())
                );
            }
        }
        if let Some(first) = self.batches.first() {
            let _ = writeln!(
                out,
                "\nbatches of {}, {} constraints per member (speedup: bellperson's wall time \
                 over the row's; peak x1: over the same prover's batch of one; x warm: a fresh \
                 process's wall time over the warm drop-in's)",
                first.circuit, first.constraints
            );
            let _ = writeln!(
                out,
                "{:>7} {:<23} {:>9} {:>10} {:>8} {:>10} {:>8} {:>7}",
                "members",
                "prover",
                "in flight",
                "wall ms",
                "speedup",
                "peak MiB",
                "peak x1",
                "x warm"
            );
            for b in self.batches {
                let _ = writeln!(
                    out,
                    "{:>7} {:<23} {:>9} {:>10.0} {:>8.2} {:>10.1} {:>8.2} {:>7}",
                    b.members,
                    b.prover,
                    b.in_flight.map_or("-".into(), |k| k.to_string()),
                    b.wall_ms,
                    b.speedup_over_bellperson,
                    b.peak_heap_bytes as f64 / (1 << 20) as f64,
                    b.peak_over_batch_of_one,
                    b.over_warm.map_or("-".into(), |x| format!("{x:.2}"))
                );
            }
        }
        out
    }

    /// The report as pretty JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the report holds only plain data")
    }

    /// Writes [`Report::json`] to `path`, creating its directory.
    pub fn write_json(&self, path: &Path) -> io::Result<()> {
        let context = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(context)?;
        }
        std::fs::write(path, self.json()).map_err(context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Row> {
        vec![
            Row {
                circuit: "merkle depth 1".into(),
                variant: "baseline",
                constraints: 45904,
                ns_per_constraint: 700.0,
                ratio_to_baseline: Some(1.0),
                allocations_per_constraint: 4.5,
                ..Row::default()
            },
            Row {
                circuit: "merkle depth 1".into(),
                variant: "all",
                constraints: 45904,
                ns_per_constraint: 400.0,
                ratio_to_baseline: Some(1.75),
                ipc: Some(2.5),
                counters_scaled: true,
                pool_hit_rate: Some(0.99),
                ..Row::default()
            },
        ]
    }

    fn batches() -> Vec<BatchRow> {
        vec![BatchRow {
            circuit: "merkle depth 1".into(),
            constraints: 45904,
            members: 10,
            prover: "drop-in",
            in_flight: Some(2),
            wall_ms: 5000.0,
            speedup_over_bellperson: 1.25,
            peak_heap_bytes: 3 << 20,
            peak_over_batch_of_one: 1.5,
            over_warm: Some(1.1),
        }]
    }

    #[test]
    fn table_has_a_row_per_variant_and_marks_missing_and_scaled_figures() {
        let rows = rows();
        let report = Report {
            schema: SCHEMA,
            allocator: "jemalloc",
            hardware_counters: Some("not available"),
            rows: &rows,
            batches: &batches(),
        };
        let table = report.table();
        assert!(
            table.contains("merkle depth 1: 45904 constraints"),
            "{table}"
        );
        let baseline = table.lines().find(|l| l.starts_with("baseline")).unwrap();
        assert!(
            baseline.contains("700.0") && baseline.contains("n/a"),
            "{baseline}"
        );
        let all = table.lines().find(|l| l.starts_with("all")).unwrap();
        assert!(all.contains("1.750") && all.ends_with("(scaled)"), "{all}");
        let batch = table.lines().last().unwrap();
        assert_eq!(
            batch.split_whitespace().collect::<Vec<_>>(),
            ["10", "drop-in", "2", "5000", "1.25", "3.0", "1.50", "1.10"]
        );
    }

    #[test]
    fn json_field_names_are_the_documented_schema() {
        let rows = rows();
        let report = Report {
            schema: SCHEMA,
            allocator: "system",
            hardware_counters: None,
            rows: &rows,
            batches: &batches(),
        };
        let value: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
        assert_eq!(value["schema"], 5);
        assert_eq!(value["allocator"], "system");
        assert!(value["hardware_counters"].is_null());
        let row = &value["rows"][1];
        let mut keys: Vec<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "allocations_per_constraint",
                "branch_miss_rate",
                "bytes_per_constraint",
                "bytes_per_nonzero",
                "cache_miss_rate",
                "circuit",
                "constraints",
                "counters_scaled",
                "description",
                "dictionary_len",
                "evaluate_ns_per_constraint",
                "instructions_per_constraint",
                "ipc",
                "l1d_misses_per_constraint",
                "nonzeros_per_constraint",
                "ns_per_constraint",
                "page_faults",
                "pool_hit_rate",
                "ratio_to_baseline",
                "record_ms",
                "task_clock_ns",
                "variant",
                "witness_ns_per_constraint",
            ]
        );
        assert_eq!(row["ipc"], 2.5);
        assert!(row["instructions_per_constraint"].is_null());
        let batch = value["batches"][0].as_object().unwrap();
        let mut keys: Vec<&str> = batch.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "circuit",
                "constraints",
                "in_flight",
                "members",
                "over_warm",
                "peak_heap_bytes",
                "peak_over_batch_of_one",
                "prover",
                "speedup_over_bellperson",
                "wall_ms",
            ]
        );
    }

    #[test]
    fn write_json_reports_the_path_on_failure() {
        let rows = rows();
        let report = Report {
            schema: SCHEMA,
            allocator: "jemalloc",
            hardware_counters: None,
            rows: &rows,
            batches: &[],
        };
        let blocker = std::env::temp_dir().join(format!("synthpool-report-{}", std::process::id()));
        std::fs::write(&blocker, b"a file, not a directory").unwrap();
        let err = report.write_json(&blocker.join("report.json")).unwrap_err();
        assert!(err.to_string().contains("synthpool-report"), "{err}");
        std::fs::remove_file(&blocker).unwrap();
    }
}

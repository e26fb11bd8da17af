//! Batches of proofs: bellperson's `create_random_proof_batch` against the drop-in at several
//! members in flight, for the same circuits and randomness, with the peak heap and wall
//! time of each batch.
//!
//! The members are one workload's circuit (bellperson proves it built with upstream's
//! gadgets, as an unpatched fork has it; the drop-in with ours, as a patched fork has it),
//! and every batch's proofs are checked byte-identical to bellperson's before a figure is
//! kept. The drop-in is warm: one batch of one records the structure and earns the
//! recording's trust first, and is reported apart as the cold batch. Then each batch is
//! proven again by a fresh process (this binary, run with [`FRESH_BATCH`]) that finds the
//! recording in its cache directory, made ahead of time, as a proving machine's would:
//! the way curio runs every proof.

use std::time::Instant;

use bellperson::groth16::{self, Parameters};
use blstrs::Bls12;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use serde::Serialize;
use synthpool::groth16::{in_flight, set_cache_dir, set_in_flight, v0_27 as dropin};

use crate::alloc;
use crate::circuits::GadgetSet;
use crate::variants::Workload;

const BELLPERSON: &str = "bellperson";
const DROP_IN: &str = "drop-in";
const DROP_IN_COLD: &str = "drop-in (cold)";
const DROP_IN_FRESH: &str = "drop-in (fresh process)";

/// The first argument that makes the bench binary a fresh process proving one batch:
/// `FRESH_BATCH circuit size members parameters-file`, the recording cache in
/// `SYNTHPOOL_RECORDING_CACHE`. It prints `wall_ms=… peak=… proofs=…` (the proofs' bytes in
/// hex).
pub const FRESH_BATCH: &str = "--fresh-batch";

/// One batch proved by one prover.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BatchRow {
    /// The members' workload, with its size.
    pub circuit: String,
    /// Constraints per member.
    pub constraints: usize,
    /// Members in the batch.
    pub members: usize,
    /// `bellperson`, `drop-in`, `drop-in (cold)` for the batch that records, or `drop-in
    /// (fresh process)` for a process of its own with the recording in its cache.
    pub prover: &'static str,
    /// The drop-in's members in flight; null for bellperson.
    pub in_flight: Option<usize>,
    /// Wall time of the batch, in milliseconds.
    pub wall_ms: f64,
    /// bellperson's wall time for this many members over this row's (above 1: faster).
    pub speedup_over_bellperson: f64,
    /// Peak heap during the batch above what was live before it, in bytes.
    pub peak_heap_bytes: u64,
    /// This row's peak heap over the same prover's batch of one member.
    pub peak_over_batch_of_one: f64,
    /// A fresh process's wall time over the warm drop-in's for the same batch at the
    /// same members in flight; null for other rows.
    pub over_warm: Option<f64>,
}

/// What the batch section measures: parameters for `workload`, generated once.
pub struct Batches {
    workload: Workload,
    params: Parameters<Bls12>,
    constraints: usize,
    /// Time taken by bellperson's parameter generation, in seconds.
    pub setup_s: f64,
}

fn failed(what: &str, e: impl std::fmt::Display) -> String {
    format!("batches: {what}: {e}")
}

impl Batches {
    /// Generates random parameters for `workload` (bellperson's
    /// `generate_random_parameters`, a fixed seed).
    pub fn new(workload: Workload) -> Result<Batches, String> {
        let start = Instant::now();
        let mut rng = XorShiftRng::seed_from_u64(20);
        let blank = workload.circuit(GadgetSet::Upstream);
        let params = groth16::generate_random_parameters::<Bls12, _, _>(blank, &mut rng)
            .map_err(|e| failed("parameter generation", e))?;
        let setup_s = start.elapsed().as_secs_f64();
        let constraints = synthpool::synthesize(workload.circuit(GadgetSet::Synthpool))
            .map_err(|e| failed("synthesis", e))?
            .shape()
            .constraints;
        Ok(Batches {
            workload,
            params,
            constraints,
            setup_s,
        })
    }

    /// A batch of `n` members built with `gadgets`, proved by `prove` (named `who` in an
    /// error) with the batch's seeded rng: its proofs, wall time in ms and peak heap.
    fn timed<E: std::fmt::Display>(
        &self,
        n: usize,
        gadgets: GadgetSet,
        who: &str,
        prove: impl FnOnce(
            Vec<crate::variants::BenchCircuit>,
            &mut XorShiftRng,
        ) -> Result<Vec<groth16::Proof<Bls12>>, E>,
    ) -> Result<(Vec<groth16::Proof<Bls12>>, f64, u64), String> {
        let members = (0..n).map(|_| self.workload.circuit(gadgets)).collect();
        let mut rng = XorShiftRng::seed_from_u64(n as u64);
        let start = Instant::now();
        let (proofs, peak) = alloc::peak_during(|| prove(members, &mut rng));
        let wall = start.elapsed().as_secs_f64() * 1e3;
        Ok((proofs.map_err(|e| failed(who, e))?, wall, peak))
    }

    /// bellperson's batch of `n`: its proofs, wall time in ms and peak heap.
    fn bellperson(&self, n: usize) -> Result<(Vec<groth16::Proof<Bls12>>, f64, u64), String> {
        self.timed(n, GadgetSet::Upstream, "bellperson", |members, rng| {
            groth16::create_random_proof_batch(members, &self.params, rng)
        })
    }

    /// The drop-in's batch of `n` at `k` in flight: its proofs, wall time in ms and peak heap.
    fn dropin(&self, n: usize, k: usize) -> Result<(Vec<groth16::Proof<Bls12>>, f64, u64), String> {
        set_in_flight(k).map_err(|e| failed("in flight", e))?;
        self.timed(n, GadgetSet::Synthpool, "drop-in", |members, rng| {
            dropin::create_random_proof_batch(members, &self.params, rng)
        })
    }

    /// Batches of one and of each of `sizes` members: bellperson's, then the drop-in's at 1,
    /// 2 and the batch size in flight. Fails if any proof differs from bellperson's.
    pub fn measure(&self, sizes: &[usize]) -> Result<Vec<BatchRow>, String> {
        // Batches of a warm or a cold process, by the process's own recordings only.
        set_cache_dir(None);
        let restore = in_flight().map_err(|e| failed("in flight", e))?;
        let row = |members, prover, in_flight, wall_ms, peak_heap_bytes| BatchRow {
            circuit: self.workload.label(),
            constraints: self.constraints,
            members,
            prover,
            in_flight,
            wall_ms,
            peak_heap_bytes,
            ..BatchRow::default()
        };
        let mut rows = Vec::new();
        let (expected, _, _) = self.bellperson(1)?;
        let (cold, wall, peak) = self.dropin(1, 1)?;
        if cold != expected {
            return Err("batches: the cold drop-in's proof differs from bellperson's".into());
        }
        rows.push(row(1, DROP_IN_COLD, Some(1), wall, peak));
        let mut sizes: Vec<usize> = std::iter::once(1).chain(sizes.iter().copied()).collect();
        sizes.dedup();
        let mut expected_bytes = Vec::new();
        for &n in &sizes {
            let (expected, wall, peak) = self.bellperson(n)?;
            expected_bytes.push(proof_bytes(&expected)?);
            rows.push(row(n, BELLPERSON, None, wall, peak));
            let mut ks = vec![1, 2, n];
            ks.retain(|&k| k <= n);
            ks.sort_unstable();
            ks.dedup();
            for k in ks {
                let (proofs, wall, peak) = self.dropin(n, k)?;
                if proofs != expected {
                    return Err(format!(
                        "batches: the drop-in's proofs of {n} members at {k} in flight differ \
                         from bellperson's"
                    ));
                }
                rows.push(row(n, DROP_IN, Some(k), wall, peak));
            }
        }
        set_in_flight(restore).map_err(|e| failed("in flight", e))?;
        let batches: Vec<(usize, Vec<u8>)> = sizes.into_iter().zip(expected_bytes).collect();
        rows.extend(self.fresh_processes(&batches, restore, &rows)?);
        relate(&mut rows);
        Ok(rows)
    }

    /// Each batch of `batches` (members, and bellperson's proofs' bytes) proven by a fresh
    /// process at `in_flight` members in flight whose cache directory holds the workload's
    /// recording, made ahead of time from the parameters' verifying key; its proofs
    /// checked against bellperson's, and its wall time related to the warm drop-in's of
    /// `rows`. The process's own setup (reading the parameters) is not timed; opening the
    /// recording and everything after is.
    fn fresh_processes(
        &self,
        batches: &[(usize, Vec<u8>)],
        in_flight: usize,
        rows: &[BatchRow],
    ) -> Result<Vec<BatchRow>, String> {
        let scratch = std::env::temp_dir().join(format!("synth-only-fresh-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        let (cache, params) = (scratch.join("recordings"), scratch.join("params"));
        std::fs::create_dir_all(&scratch).map_err(|e| failed("scratch directory", e))?;
        let written = std::fs::File::create(&params).and_then(|file| self.params.write(file));
        written.map_err(|e| failed("writing the parameters", e))?;
        let blank = self.workload.circuit(GadgetSet::Synthpool);
        dropin::save_recording(blank, &self.params.vk, &cache)
            .map_err(|e| failed("recording ahead of time", e))?;
        let (name, size) = self.workload.name_and_size();
        let exe = std::env::current_exe().map_err(|e| failed("this binary", e))?;
        let mut fresh = Vec::new();
        for (n, expected) in batches {
            let n = *n;
            let output = std::process::Command::new(&exe)
                .args([FRESH_BATCH, name, &size.to_string(), &n.to_string()])
                .arg(&params)
                .env(synthpool::groth16::CACHE_DIR_VARIABLE, &cache)
                .env(
                    synthpool::groth16::IN_FLIGHT_VARIABLE,
                    in_flight.to_string(),
                )
                .output()
                .map_err(|e| failed("a fresh process", e))?;
            let report = String::from_utf8_lossy(&output.stdout).into_owned();
            if !output.status.success() {
                return Err(failed(
                    "a fresh process",
                    format!("{report}{}", String::from_utf8_lossy(&output.stderr)),
                ));
            }
            let field = |key: &str| {
                report
                    .split_whitespace()
                    .find_map(|word| word.strip_prefix(key)?.strip_prefix('='))
                    .ok_or_else(|| failed("a fresh process", format!("no {key} in `{report}`")))
            };
            let wall: f64 = field("wall_ms")?
                .parse()
                .map_err(|e| failed("wall_ms", e))?;
            let peak: u64 = field("peak")?.parse().map_err(|e| failed("peak", e))?;
            if field("proofs")? != hex(expected) {
                return Err(format!(
                    "batches: a fresh process's proofs of {n} members differ from bellperson's"
                ));
            }
            let k = in_flight.min(n);
            let warm = rows
                .iter()
                .find(|r| r.members == n && r.prover == DROP_IN && r.in_flight == Some(k));
            fresh.push(BatchRow {
                circuit: self.workload.label(),
                constraints: self.constraints,
                members: n,
                prover: DROP_IN_FRESH,
                in_flight: Some(k),
                wall_ms: wall,
                peak_heap_bytes: peak,
                over_warm: warm.map(|warm| wall / warm.wall_ms),
                ..BatchRow::default()
            });
        }
        let _ = std::fs::remove_dir_all(&scratch);
        Ok(fresh)
    }
}

/// Proofs as bellperson writes them, one after another.
fn proof_bytes(proofs: &[groth16::Proof<Bls12>]) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    for proof in proofs {
        proof
            .write(&mut bytes)
            .map_err(|e| failed("proof bytes", e))?;
    }
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The fresh process of [`FRESH_BATCH`]: `args` are what follows it. Proves the batch as
/// the warm rows do (the same members and seeded rng), timed from before the drop-in opens
/// its cache to its last proof, and prints the report line.
pub fn fresh_batch(args: &[String]) -> Result<(), String> {
    let [name, size, members, params] = args else {
        return Err(format!(
            "{FRESH_BATCH} circuit size members parameters-file"
        ));
    };
    let number = |text: &String| text.parse::<usize>().map_err(|e| failed(text, e));
    let workload = Workload::by_name(name, Some(number(size)?))?;
    let n = number(members)?;
    let file = std::fs::File::open(params).map_err(|e| failed("the parameters", e))?;
    let params = Parameters::<Bls12>::read(std::io::BufReader::new(file), false)
        .map_err(|e| failed("reading the parameters", e))?;
    let members: Vec<_> = (0..n)
        .map(|_| workload.circuit(GadgetSet::Synthpool))
        .collect();
    let mut rng = XorShiftRng::seed_from_u64(n as u64);
    let start = Instant::now();
    // As the patched fork proves: the drop-in that can make a member again reads the cache.
    let remake = |_: usize| Ok::<_, String>(workload.circuit(GadgetSet::Synthpool));
    let (proofs, peak) = alloc::peak_during(|| {
        dropin::create_random_proof_batch_remaking(members, remake, &params, false, &mut rng)
    });
    let wall = start.elapsed().as_secs_f64() * 1e3;
    let proofs = proofs.map_err(|e| failed("the fresh batch", e))?;
    let stats = synthpool::groth16::stats::<blstrs::Scalar>();
    if stats.loaded != 1 || stats.recorded != 0 {
        return Err(format!(
            "the fresh process did not prove from the cached recording: {stats:?}"
        ));
    }
    println!(
        "wall_ms={wall} peak={peak} proofs={}",
        hex(&proof_bytes(&proofs)?)
    );
    Ok(())
}

/// Fills each row's ratios: to bellperson's wall time for as many members, and to its own
/// prover's peak heap for one member.
fn relate(rows: &mut [BatchRow]) {
    let find = |rows: &[BatchRow], members: usize, prover: &str| {
        rows.iter()
            .find(|r| r.members == members && r.prover == prover)
            .map(|r| (r.wall_ms, r.peak_heap_bytes))
    };
    let snapshot = rows.to_vec();
    for row in rows.iter_mut() {
        let own = if row.prover == BELLPERSON {
            BELLPERSON
        } else {
            DROP_IN
        };
        if let Some((wall, _)) = find(&snapshot, row.members, BELLPERSON) {
            row.speedup_over_bellperson = wall / row.wall_ms;
        }
        if let Some((_, one)) = find(&snapshot, 1, own) {
            row.peak_over_batch_of_one = row.peak_heap_bytes as f64 / one.max(1) as f64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_relate_to_bellperson_and_to_the_same_provers_batch_of_one() {
        let row = |members, prover, in_flight, wall_ms, peak_heap_bytes| BatchRow {
            members,
            prover,
            in_flight,
            wall_ms,
            peak_heap_bytes,
            ..BatchRow::default()
        };
        let mut rows = vec![
            row(1, DROP_IN_COLD, Some(1), 300.0, 900),
            row(1, BELLPERSON, None, 100.0, 100),
            row(1, DROP_IN, Some(1), 50.0, 110),
            row(4, BELLPERSON, None, 400.0, 400),
            row(4, DROP_IN, Some(2), 200.0, 220),
        ];
        relate(&mut rows);
        let figures: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| (r.speedup_over_bellperson, r.peak_over_batch_of_one))
            .collect();
        assert_eq!(
            figures,
            [
                (1.0 / 3.0, 900.0 / 110.0),
                (1.0, 1.0),
                (2.0, 1.0),
                (1.0, 4.0),
                (2.0, 2.0)
            ]
        );
    }
}

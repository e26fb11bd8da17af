//! Batches of proofs: bellperson's `create_random_proof_batch` against the drop-in at several
//! members in flight, for the same circuits and randomness, with the peak heap and wall
//! time of each batch.
//!
//! The members are one workload's circuit (bellperson proves it built with upstream's
//! gadgets, as an unpatched fork has it; the drop-in with ours, as a patched fork has it),
//! and every batch's proofs are checked byte-identical to bellperson's before a figure is
//! kept. The drop-in is warm: one batch of one records the structure and earns the
//! recording's trust first, and is reported apart as the cold batch.

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

/// One batch proved by one prover.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BatchRow {
    /// The members' workload, with its size.
    pub circuit: String,
    /// Constraints per member.
    pub constraints: usize,
    /// Members in the batch.
    pub members: usize,
    /// `bellperson`, `drop-in`, or `drop-in (cold)` for the batch that records.
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
        for n in sizes {
            let (expected, wall, peak) = self.bellperson(n)?;
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
        relate(&mut rows);
        Ok(rows)
    }
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

//! Named synthesis settings and workloads, shared by the benchmark and the runner that
//! `scripts/perf-stat.sh` profiles, so both measure exactly the same things.

use bellpepper_core::SynthesisError;

use crate::assignment::{ProvingAssignment, Shape, SynthesisOptions};
use crate::circuits::{GadgetSet, Labeling, MerklePath, Mixed};
use crate::eval::EvalKernel;
use crate::pce::{PreparedCircuit, Recycled};
use crate::prover::synthesize_with;

/// One optimization setting, measured against `baseline`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    /// Short name used on command lines and in reports.
    pub name: &'static str,
    /// What it changes relative to the baseline.
    pub about: &'static str,
    /// Recycle LC buffers through the pool.
    pub pool: bool,
    /// Evaluation kernel.
    pub kernel: EvalKernel,
    /// Pre-size the vectors from an earlier synthesis of the same shape.
    pub presize: bool,
    /// The SHA-256 gadgets the circuit is built with.
    pub gadgets: GadgetSet,
    /// Synthesize through a pre-compiled circuit (record once; then witness + evaluate).
    pub prepared: Prepared,
}

/// Whether and how a variant uses pre-compiled evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prepared {
    /// Direct synthesis into a `ProvingAssignment`.
    No,
    /// Witness generation, then evaluation on the whole rayon pool.
    AllThreads,
    /// Witness generation, then evaluation on one thread.
    OneThread,
    /// As `AllThreads`, into buffers recycled from the previous proof.
    AllThreadsRecycled,
    /// As `OneThread`, into buffers recycled from the previous proof.
    OneThreadRecycled,
}

impl Prepared {
    /// Whether proofs reuse the previous proof's buffers.
    pub fn recycles(self) -> bool {
        matches!(
            self,
            Prepared::OneThreadRecycled | Prepared::AllThreadsRecycled
        )
    }

    /// Runs `work` on a one-thread rayon pool for the one-thread modes, else on the current
    /// pool.
    pub fn on_threads<R: Send>(self, work: impl FnOnce() -> R + Send) -> Result<R, SynthesisError> {
        match self {
            Prepared::OneThread | Prepared::OneThreadRecycled => {
                Ok(rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .build()
                    .map_err(|e| SynthesisError::IoError(std::io::Error::other(e)))?
                    .install(work))
            }
            Prepared::No | Prepared::AllThreads | Prepared::AllThreadsRecycled => Ok(work()),
        }
    }
}

impl Variant {
    /// The synthesis options of this variant for a circuit of `shape`.
    pub fn options(&self, shape: Shape) -> SynthesisOptions {
        SynthesisOptions {
            pool: self.pool,
            kernel: self.kernel,
            shape: self.presize.then_some(shape),
            ..SynthesisOptions::default()
        }
    }

    /// The variant called `name`, or an error listing the known names.
    pub fn by_name(name: &str) -> Result<Variant, String> {
        VARIANTS
            .iter()
            .copied()
            .find(|v| v.name == name)
            .ok_or_else(|| {
                let known: Vec<_> = VARIANTS.iter().map(|v| v.name).collect();
                format!("unknown variant `{name}` (known: {})", known.join(", "))
            })
    }
}

/// Every variant, baseline first.
pub const VARIANTS: [Variant; 12] = [
    Variant {
        name: "baseline",
        about: "bellperson gadgets, fresh LCs per enforce, portable kernel, growing vectors",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Bellperson,
        prepared: Prepared::No,
    },
    Variant {
        name: "pool",
        about: "+ LC buffers from the owner-local VecPool",
        pool: true,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Bellperson,
        prepared: Prepared::No,
    },
    Variant {
        name: "gadgets",
        about: "+ allocation-free SHA-256 gadgets (synthpool::sha256)",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        prepared: Prepared::No,
    },
    Variant {
        name: "prefetch",
        about: "+ prefetching evaluation kernel",
        pool: false,
        kernel: EvalKernel::Prefetch,
        presize: false,
        gadgets: GadgetSet::Bellperson,
        prepared: Prepared::No,
    },
    Variant {
        name: "bitvalues",
        about: "+ evaluation kernel with the 0/1 witness-value fast path",
        pool: false,
        kernel: EvalKernel::BitValues,
        presize: false,
        gadgets: GadgetSet::Bellperson,
        prepared: Prepared::No,
    },
    Variant {
        name: "presize",
        about: "+ vectors pre-sized from an earlier synthesis of the shape",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: true,
        gadgets: GadgetSet::Bellperson,
        prepared: Prepared::No,
    },
    Variant {
        name: "gadgets+pool",
        about: "allocation-free gadgets + pool",
        pool: true,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        prepared: Prepared::No,
    },
    Variant {
        name: "all",
        about: "gadgets + pool + presize + bit-value kernel with prefetch",
        pool: true,
        kernel: EvalKernel::BitValuesPrefetch,
        presize: true,
        gadgets: GadgetSet::Synthpool,
        prepared: Prepared::No,
    },
    Variant {
        name: "pce-1t",
        about: "pre-compiled: witness (our gadgets) + CSR evaluation on one thread",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        prepared: Prepared::OneThread,
    },
    Variant {
        name: "pce",
        about: "pre-compiled: witness (our gadgets) + CSR evaluation on all threads",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        prepared: Prepared::AllThreads,
    },
    Variant {
        name: "pce-reuse-1t",
        about: "pre-compiled, one thread, buffers recycled from the previous proof",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        prepared: Prepared::OneThreadRecycled,
    },
    Variant {
        name: "pce-reuse",
        about: "pre-compiled, all threads, buffers recycled from the previous proof",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        prepared: Prepared::AllThreadsRecycled,
    },
];

/// A PoRep-shaped circuit and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// This many labels.
    Labeling(usize),
    /// A Merkle path of this depth.
    Merkle(usize),
    /// [`Mixed::sample`] of this size.
    Mixed(usize),
}

impl Workload {
    /// The workload called `name` (`labeling`, `merkle`, `mixed`), with `size` or its default
    /// (1 label, depth 8, mixed 2).
    pub fn by_name(name: &str, size: Option<usize>) -> Result<Workload, String> {
        match name {
            "labeling" => Ok(Workload::Labeling(size.unwrap_or(1))),
            "merkle" => Ok(Workload::Merkle(size.unwrap_or(8))),
            "mixed" => Ok(Workload::Mixed(size.unwrap_or(2))),
            other => Err(format!(
                "unknown circuit `{other}` (known: labeling, merkle, mixed)"
            )),
        }
    }

    /// A readable name with the size.
    pub fn label(&self) -> String {
        match self {
            Workload::Labeling(n) => format!("labeling x{n}"),
            Workload::Merkle(depth) => format!("merkle depth {depth}"),
            Workload::Mixed(n) => format!("mixed {n}"),
        }
    }

    /// The workload's circuit, built with `gadgets`.
    pub fn circuit(&self, gadgets: GadgetSet) -> Mixed {
        match *self {
            Workload::Labeling(n) => Mixed {
                labels: (0..n)
                    .map(|i| Labeling::sample(i as u64, gadgets))
                    .collect(),
                paths: Vec::new(),
            },
            Workload::Merkle(depth) => Mixed {
                labels: Vec::new(),
                paths: vec![MerklePath::sample(7, depth, gadgets)],
            },
            Workload::Mixed(n) => Mixed::sample(n, gadgets),
        }
    }

    /// Synthesizes the workload built with `gadgets`, with `options`.
    pub fn synthesize<Scalar>(
        &self,
        gadgets: GadgetSet,
        options: &SynthesisOptions,
    ) -> Result<ProvingAssignment<Scalar>, SynthesisError>
    where
        Scalar: ff::PrimeField + ff::PrimeFieldBits,
    {
        synthesize_with(self.circuit(gadgets), options)
    }

    /// Witness generation and evaluation against `prepared` as `mode` says (one thread or
    /// the rayon pool; fresh or `recycled` buffers). The assignment is dropped, or left in
    /// `recycled`.
    pub fn synthesize_prepared<Scalar>(
        &self,
        prepared: &PreparedCircuit<Scalar>,
        gadgets: GadgetSet,
        mode: Prepared,
        recycled: &mut Recycled<Scalar>,
    ) -> Result<(), SynthesisError>
    where
        Scalar: ff::PrimeField + ff::PrimeFieldBits,
    {
        let circuit = self.circuit(gadgets);
        mode.on_threads(|| {
            if mode.recycles() {
                recycled.synthesize(prepared, circuit).map(drop)
            } else {
                prepared.synthesize(circuit).map(drop)
            }
        })?
    }
}

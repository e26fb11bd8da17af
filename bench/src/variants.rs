//! Named synthesis settings and workloads, shared by the benchmark and the runner that
//! `scripts/perf-stat.sh` profiles, so both measure exactly the same things.

use synthpool::pool::PoolStats;
use synthpool::precompiled::{ProvingBuffers, Recording};
use synthpool::{Error, EvalKernel, ProvingAssignment, Shape, SynthesisOptions};

use crate::circuits::{GadgetSet, Labeling, MerklePath, Mixed};

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
    /// Synthesize through a recording (record once; then witness + evaluate), and how.
    pub precompiled: PrecompiledMode,
}

/// Whether and how a variant uses pre-compiled evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrecompiledMode {
    /// Direct synthesis into a `ProvingAssignment`.
    Off,
    /// Witness generation, then evaluation on the whole rayon pool.
    AllThreads,
    /// Witness generation, then evaluation on one thread.
    OneThread,
    /// As `AllThreads`, into buffers recycled from the previous proof.
    AllThreadsRecycled,
    /// As `OneThread`, into buffers recycled from the previous proof.
    OneThreadRecycled,
}

impl PrecompiledMode {
    /// Whether proofs reuse the previous proof's buffers.
    pub fn recycles(self) -> bool {
        matches!(
            self,
            PrecompiledMode::OneThreadRecycled | PrecompiledMode::AllThreadsRecycled
        )
    }

    /// Runs `work` on a one-thread rayon pool for the one-thread modes, else on the current
    /// pool.
    pub fn on_threads<R: Send>(self, work: impl FnOnce() -> R + Send) -> R {
        match self {
            PrecompiledMode::OneThread | PrecompiledMode::OneThreadRecycled => {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .build()
                    .expect("a one-thread rayon pool")
                    .install(work)
            }
            PrecompiledMode::Off
            | PrecompiledMode::AllThreads
            | PrecompiledMode::AllThreadsRecycled => work(),
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
        precompiled: PrecompiledMode::Off,
    },
    Variant {
        name: "pool",
        about: "+ LC buffers from the owner-local VecPool",
        pool: true,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Bellperson,
        precompiled: PrecompiledMode::Off,
    },
    Variant {
        name: "gadgets",
        about: "+ allocation-free SHA-256 gadgets (synthpool::sha256)",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        precompiled: PrecompiledMode::Off,
    },
    Variant {
        name: "prefetch",
        about: "+ prefetching evaluation kernel",
        pool: false,
        kernel: EvalKernel::Prefetch,
        presize: false,
        gadgets: GadgetSet::Bellperson,
        precompiled: PrecompiledMode::Off,
    },
    Variant {
        name: "bitvalues",
        about: "+ evaluation kernel with the 0/1 witness-value fast path",
        pool: false,
        kernel: EvalKernel::BitValues,
        presize: false,
        gadgets: GadgetSet::Bellperson,
        precompiled: PrecompiledMode::Off,
    },
    Variant {
        name: "presize",
        about: "+ vectors pre-sized from an earlier synthesis of the shape",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: true,
        gadgets: GadgetSet::Bellperson,
        precompiled: PrecompiledMode::Off,
    },
    Variant {
        name: "gadgets+pool",
        about: "allocation-free gadgets + pool",
        pool: true,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        precompiled: PrecompiledMode::Off,
    },
    Variant {
        name: "all",
        about: "gadgets + pool + presize + bit-value kernel with prefetch",
        pool: true,
        kernel: EvalKernel::BitValuesPrefetch,
        presize: true,
        gadgets: GadgetSet::Synthpool,
        precompiled: PrecompiledMode::Off,
    },
    Variant {
        name: "pce-1t",
        about: "pre-compiled: witness (our gadgets) + CSR evaluation on one thread",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        precompiled: PrecompiledMode::OneThread,
    },
    Variant {
        name: "pce",
        about: "pre-compiled: witness (our gadgets) + CSR evaluation on all threads",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        precompiled: PrecompiledMode::AllThreads,
    },
    Variant {
        name: "pce-reuse-1t",
        about: "pre-compiled, one thread, buffers recycled from the previous proof",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        precompiled: PrecompiledMode::OneThreadRecycled,
    },
    Variant {
        name: "pce-reuse",
        about: "pre-compiled, all threads, buffers recycled from the previous proof",
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        precompiled: PrecompiledMode::AllThreadsRecycled,
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

    /// Synthesizes the workload built with `gadgets`, with `options`; returns its shape and,
    /// with the pool on, the pool's counters.
    pub fn synthesize<Scalar>(
        &self,
        gadgets: GadgetSet,
        options: &SynthesisOptions,
    ) -> Result<(Shape, Option<PoolStats>), Error>
    where
        Scalar: ff::PrimeField + ff::PrimeFieldBits,
    {
        let mut assignment = ProvingAssignment::<Scalar>::with_options(options)?;
        assignment.synthesize(self.circuit(gadgets))?;
        let stats = assignment.pool_stats();
        let vectors = assignment.into_vectors()?;
        Ok((vectors.shape(), stats))
    }

    /// Witness generation and evaluation against `recording` as `mode` says (one thread or
    /// the rayon pool; fresh or recycled `buffers`). The vectors are dropped, or left in
    /// `buffers`.
    pub fn synthesize_precompiled<Scalar>(
        &self,
        recording: &Recording<Scalar>,
        gadgets: GadgetSet,
        mode: PrecompiledMode,
        buffers: &mut ProvingBuffers<Scalar>,
    ) -> Result<(), Error>
    where
        Scalar: ff::PrimeField + ff::PrimeFieldBits,
    {
        let circuit = self.circuit(gadgets);
        mode.on_threads(|| {
            if mode.recycles() {
                buffers.synthesize(recording, circuit).map(drop)
            } else {
                recording.synthesize(circuit).map(drop)
            }
        })
    }
}

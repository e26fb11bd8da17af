//! Named synthesis settings and workloads, shared by the benchmark and the runner that
//! `scripts/perf-stat.sh` profiles, so both measure exactly the same things.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar as Fr;
use ff::PrimeField;
use rayon::prelude::*;
use synthpool::precompiled::{ProvingBuffers, Recording, Witness};
use synthpool::tuning::{self, EvalKernel, Observe, PoolStats, Tune};
use synthpool::{Error, ProverVectors, ProvingAssignment, Shape, SynthesisOptions};

use crate::circuits::{GadgetSet, Labeling, MerklePath, Mixed};
use crate::porep::{Partition, PartitionParts, SectorShape};
use crate::post::{PostPartition, WINDOW_POST_CHALLENGES};
use crate::snap::SnapPartition;

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
    /// How the circuit is synthesized.
    pub path: Path,
    /// Whether Poseidon's products may take the eight-lane (AVX-512 IFMA) path.
    pub lanes: bool,
    /// Whether the variant runs on a one-thread rayon pool (else on the global pool, where
    /// a partition's challenges spread over every thread).
    pub one_thread: bool,
    /// Whether a recorded circuit's parts write their witness at once, in place.
    pub spread_witness: bool,
    /// Whether a circuit's parts are spread over branches.
    pub branches: bool,
    /// Whether a system that copies its branches in gets one per thread (else one per part).
    pub branch_per_thread: bool,
    /// Whether branches of a prover's assignment read the values before them from one copy
    /// shared by all (else each copies them).
    pub shared_values: bool,
    /// Whether rows evaluated over recycled vectors are written with streaming stores.
    pub streamed_rows: bool,
    /// Whether witness values are classified as they are written (else by evaluation).
    pub classify_as_written: bool,
}

/// How a variant synthesizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Direct synthesis into a `ProvingAssignment`.
    Direct,
    /// One circuit through a recording: the witness (its parts at once where the recording
    /// places them), then the evaluation (by rows), on the variant's threads.
    Recorded {
        /// Whether the buffers of the previous proof are reused.
        recycled: bool,
        /// Whether the witness takes the native SHA-256 path.
        native: bool,
    },
    /// A proving loop: one circuit per rayon thread, in parallel, each through the
    /// recording into its own buffers.
    PerThread {
        /// Whether the buffers of the previous proof are reused.
        recycled: bool,
    },
    /// What the drop-in batch prover synthesizes for a batch of two members, one after
    /// the other, as its synthesis thread does (their proving is bellperson's work).
    DropIn {
        /// Whether the structure's recording is trusted already (else the first member is
        /// recorded while synthesized directly, and the recording checked against it).
        warm: bool,
        /// Whether the members are evaluated into storage the previous batch kept (buffer
        /// retention), else into fresh vectors with the FFT domain's capacity.
        retained: bool,
    },
}

impl Path {
    /// Whether the variant needs a recording made up front.
    pub fn records(self) -> bool {
        matches!(self, Path::Recorded { .. } | Path::PerThread { .. })
    }
}

impl Variant {
    /// Runs `work` with this variant's process-wide settings (the lanes, the branches) on its threads (the
    /// one-thread pool, or the calling thread with the global pool), then restores the
    /// defaults.
    pub fn with_settings<R: Send>(&self, work: impl FnOnce() -> R + Send) -> R {
        tuning::set(tuning::Knobs {
            lanes: self.lanes,
            branches: self.branches,
            shared_branch_values: self.shared_values,
            branch_per_thread: self.branch_per_thread,
            spread_witness: self.spread_witness,
            streamed_rows: self.streamed_rows,
            classify_as_written: self.classify_as_written,
        });
        let result = if self.one_thread {
            on_one_thread(work)
        } else {
            work()
        };
        tuning::set(tuning::Knobs::default());
        result
    }

    /// The synthesis options of this variant for a circuit of `shape`.
    pub fn options(&self, shape: Shape) -> SynthesisOptions {
        SynthesisOptions::default()
            .with_pool(self.pool)
            .with_kernel(self.kernel)
            .with_shape(self.presize.then_some(shape))
    }

    /// Circuits one run synthesizes (so figures are per constraint synthesized).
    pub fn batch(&self) -> usize {
        match self.path {
            Path::Direct | Path::Recorded { .. } => 1,
            Path::PerThread { .. } => rayon::current_num_threads(),
            Path::DropIn { .. } => 2,
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

/// A variant of direct synthesis.
const fn direct(
    name: &'static str,
    about: &'static str,
    pool: bool,
    kernel: EvalKernel,
    presize: bool,
    gadgets: GadgetSet,
) -> Variant {
    Variant {
        name,
        about,
        pool,
        kernel,
        presize,
        gadgets,
        path: Path::Direct,
        lanes: true,
        one_thread: false,
        spread_witness: true,
        branches: true,
        branch_per_thread: true,
        shared_values: true,
        streamed_rows: true,
        classify_as_written: true,
    }
}

/// A variant of pre-compiled synthesis (our gadgets; the kernel and pool do not apply).
const fn precompiled(name: &'static str, about: &'static str, path: Path) -> Variant {
    Variant {
        name,
        about,
        pool: false,
        kernel: EvalKernel::Portable,
        presize: false,
        gadgets: GadgetSet::Synthpool,
        path,
        lanes: true,
        one_thread: matches!(path, Path::Recorded { .. }),
        spread_witness: true,
        branches: true,
        branch_per_thread: true,
        shared_values: true,
        streamed_rows: true,
        classify_as_written: true,
    }
}

/// [`precompiled`] with the witness of a circuit built with other gadgets.
const fn precompiled_with(
    name: &'static str,
    about: &'static str,
    gadgets: GadgetSet,
    path: Path,
) -> Variant {
    Variant {
        gadgets,
        ..precompiled(name, about, path)
    }
}

/// Every variant, baseline first.
pub const VARIANTS: [Variant; 38] = [
    direct(
        "baseline",
        "upstream gadgets (bellperson's SHA-256, neptune's Poseidon), fresh LCs per enforce, \
         portable kernel, growing vectors",
        false,
        EvalKernel::Portable,
        false,
        GadgetSet::Upstream,
    ),
    direct(
        "pool",
        "+ LC buffers from the owner-local VecPool",
        true,
        EvalKernel::Portable,
        false,
        GadgetSet::Upstream,
    ),
    direct(
        "gadgets",
        "+ synthpool's gadgets (SHA-256 allocation-free, Poseidon without temporary LCs)",
        false,
        EvalKernel::Portable,
        false,
        GadgetSet::Synthpool,
    ),
    direct(
        "prefetch",
        "+ prefetching evaluation kernel",
        false,
        EvalKernel::Prefetch,
        false,
        GadgetSet::Upstream,
    ),
    direct(
        "bitvalues",
        "+ evaluation kernel with the 0/1 witness-value fast path",
        false,
        EvalKernel::BitValues,
        false,
        GadgetSet::Upstream,
    ),
    direct(
        "presize",
        "+ vectors pre-sized from an earlier synthesis of the shape",
        false,
        EvalKernel::Portable,
        true,
        GadgetSet::Upstream,
    ),
    direct(
        "gadgets+pool",
        "allocation-free gadgets + pool",
        true,
        EvalKernel::Portable,
        false,
        GadgetSet::Synthpool,
    ),
    direct(
        "default",
        "synthesize()'s defaults: gadgets + pool + bit-value kernel",
        true,
        EvalKernel::BitValues,
        false,
        GadgetSet::Synthpool,
    ),
    Variant {
        one_thread: true,
        ..direct(
            "default-1t",
            "as default, on one thread (a partition's challenges one after another)",
            true,
            EvalKernel::BitValues,
            false,
            GadgetSet::Synthpool,
        )
    },
    Variant {
        one_thread: true,
        branches: false,
        ..direct(
            "default-1t-no-branches",
            "as default-1t, the parts handed back: PoSt sectors in a system from new(), copied in",
            true,
            EvalKernel::BitValues,
            false,
            GadgetSet::Synthpool,
        )
    },
    Variant {
        branches: false,
        ..direct(
            "default-no-branches",
            "as default, no branches: a PoRep partition's challenges in a loop, PoSt sectors in systems from new()",
            true,
            EvalKernel::BitValues,
            false,
            GadgetSet::Synthpool,
        )
    },
    Variant {
        branch_per_thread: false,
        ..direct(
            "default-branch-per-part",
            "as default, a branch per part (a PoRep partition's challenges) instead of one per thread",
            true,
            EvalKernel::BitValues,
            false,
            GadgetSet::Synthpool,
        )
    },
    Variant {
        shared_values: false,
        ..direct(
            "default-copied-values",
            "as default, each branch with a copy of the values before it (not one shared copy)",
            true,
            EvalKernel::BitValues,
            false,
            GadgetSet::Synthpool,
        )
    },
    Variant {
        branch_per_thread: false,
        shared_values: false,
        ..direct(
            "default-branch-per-part-copied-values",
            "as default-branch-per-part, each branch with a copy of the values before it",
            true,
            EvalKernel::BitValues,
            false,
            GadgetSet::Synthpool,
        )
    },
    direct(
        "all",
        "gadgets + pool + presize + bit-value kernel with prefetch",
        true,
        EvalKernel::BitValuesPrefetch,
        true,
        GadgetSet::Synthpool,
    ),
    precompiled(
        "pce-1t",
        "pre-compiled: native witness + evaluation, one thread, fresh buffers",
        Path::Recorded {
            recycled: false,
            native: true,
        },
    ),
    precompiled(
        "pce-reuse-1t",
        "pre-compiled, one thread, buffers recycled from the previous proof",
        Path::Recorded {
            recycled: true,
            native: true,
        },
    ),
    Variant {
        branches: false,
        ..precompiled(
            "pce-reuse-1t-no-branches",
            "as pce-reuse-1t, the parts handed back: PoSt sectors in a system from new(), copied in",
            Path::Recorded {
                recycled: true,
                native: true,
            },
        )
    },
    Variant {
        lanes: false,
        ..precompiled(
            "pce-scalar-1t",
            "as pce-reuse-1t, every product scalar: the eight-lane (AVX-512 IFMA) path off",
            Path::Recorded {
                recycled: true,
                native: true,
            },
        )
    },
    precompiled(
        "pce-gadget-witness-1t",
        "as pce-reuse-1t, the witness through the gadgets' constraint paths (no native witness)",
        Path::Recorded {
            recycled: true,
            native: false,
        },
    ),
    precompiled_with(
        "pce-neptune-witness-1t",
        "as pce-reuse-1t, the witness through neptune's Poseidon gadget (SHA-256 native)",
        GadgetSet::NeptunePoseidon,
        Path::Recorded {
            recycled: true,
            native: true,
        },
    ),
    Variant {
        one_thread: false,
        ..precompiled(
            "pce-spread",
            "as pce-reuse-1t, on every thread: the parts' witness in place, the evaluation by rows",
            Path::Recorded {
                recycled: true,
                native: true,
            },
        )
    },
    Variant {
        streamed_rows: false,
        ..precompiled(
            "pce-reuse-1t-cached",
            "as pce-reuse-1t, the rows stored through the caches (no streaming stores)",
            Path::Recorded {
                recycled: true,
                native: true,
            },
        )
    },
    Variant {
        one_thread: false,
        streamed_rows: false,
        ..precompiled(
            "pce-spread-cached",
            "as pce-spread, the rows stored through the caches (no streaming stores)",
            Path::Recorded {
                recycled: true,
                native: true,
            },
        )
    },
    Variant {
        classify_as_written: false,
        ..precompiled(
            "pce-reuse-1t-classify-after",
            "as pce-reuse-1t, the witness values classified by evaluation, read back from memory",
            Path::Recorded {
                recycled: true,
                native: true,
            },
        )
    },
    Variant {
        one_thread: false,
        classify_as_written: false,
        ..precompiled(
            "pce-spread-classify-after",
            "as pce-spread, the witness values classified by evaluation, read back from memory",
            Path::Recorded {
                recycled: true,
                native: true,
            },
        )
    },
    Variant {
        one_thread: false,
        branches: false,
        ..precompiled(
            "pce-spread-no-branches",
            "as pce-spread, no branches: the parts as the circuit runs them where a system cannot branch",
            Path::Recorded {
                recycled: true,
                native: true,
            },
        )
    },
    Variant {
        one_thread: false,
        spread_witness: false,
        ..precompiled(
            "pce-spread-serial-witness",
            "as pce-spread, the parts' witness one after another on one thread",
            Path::Recorded {
                recycled: true,
                native: true,
            },
        )
    },
    precompiled(
        "pce",
        "pre-compiled proving loop: one circuit per thread in parallel, fresh buffers",
        Path::PerThread { recycled: false },
    ),
    precompiled(
        "pce-reuse",
        "pre-compiled proving loop: one circuit per thread, buffers recycled",
        Path::PerThread { recycled: true },
    ),
    precompiled(
        "dropin-cold",
        "drop-in's synthesis of a first batch of two: the first recorded while synthesized \
         directly and checked, the second evaluated",
        Path::DropIn {
            warm: false,
            retained: false,
        },
    ),
    Variant {
        branch_per_thread: false,
        ..precompiled(
            "dropin-cold-branch-per-part",
            "as dropin-cold, a branch per part instead of one per thread",
            Path::DropIn {
                warm: false,
                retained: false,
            },
        )
    },
    Variant {
        shared_values: false,
        ..precompiled(
            "dropin-cold-copied-values",
            "as dropin-cold, each branch's companion with a copy of the values before it",
            Path::DropIn {
                warm: false,
                retained: false,
            },
        )
    },
    Variant {
        branch_per_thread: false,
        shared_values: false,
        ..precompiled(
            "dropin-cold-branch-per-part-copied-values",
            "as dropin-cold-branch-per-part, each branch's companion with a copy of the values before it",
            Path::DropIn {
                warm: false,
                retained: false,
            },
        )
    },
    Variant {
        one_thread: true,
        ..precompiled(
            "dropin-cold-1t",
            "as dropin-cold, on one thread",
            Path::DropIn {
                warm: false,
                retained: false,
            },
        )
    },
    precompiled(
        "dropin-warm",
        "drop-in's synthesis of a later batch of two: evaluated into fresh vectors",
        Path::DropIn {
            warm: true,
            retained: false,
        },
    ),
    Variant {
        one_thread: true,
        ..precompiled(
            "dropin-warm-1t",
            "as dropin-warm, on one thread",
            Path::DropIn {
                warm: true,
                retained: false,
            },
        )
    },
    precompiled(
        "dropin-retained",
        "as dropin-warm, with buffer retention: evaluated into the storage the last batch kept",
        Path::DropIn {
            warm: true,
            retained: true,
        },
    ),
];

/// The one-thread rayon pool the one-thread variants run on, made once (so counters can be
/// opened on its thread before anything is measured).
pub fn one_thread_pool() -> &'static rayon::ThreadPool {
    static POOL: std::sync::OnceLock<rayon::ThreadPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a one-thread rayon pool")
    })
}

/// Runs `work` on [`one_thread_pool`].
pub fn on_one_thread<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    one_thread_pool().install(work)
}

/// A witness generator that hides that it is one, so the gadgets take their
/// constraint-building path (their native witness off) while no combination is built.
struct ConstraintPath<'a, Scalar: PrimeField>(&'a mut Witness<Scalar>);

impl<Scalar: PrimeField> ConstraintSystem<Scalar> for ConstraintPath<'_, Scalar> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.alloc(annotation, f)
    }

    fn alloc_input<F, A, AR>(&mut self, annotation: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.0.alloc_input(annotation, f)
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.0.enforce(annotation, a, b, c)
    }

    fn push_namespace<NR: Into<String>, N: FnOnce() -> NR>(&mut self, _: N) {}

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self {
        self
    }
}

/// The witness of `circuit` through the gadgets' constraint path, into `witness`, laid out
/// as the prover does (the constant one, the circuit, one constraint per input).
fn constraint_path_witness<Scalar: PrimeField, C: Circuit<Scalar>>(
    circuit: C,
    witness: &mut Witness<Scalar>,
) -> Result<(), SynthesisError> {
    let mut cs = ConstraintPath(witness);
    cs.alloc_input(|| "", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    for i in 0..cs.0.inputs().len() {
        let input = Variable::new_unchecked(Index::Input(i));
        cs.enforce(|| "", |lc| lc + input, |lc| lc, |lc| lc);
    }
    Ok(())
}

/// A Filecoin-shaped circuit and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// This many labels.
    Labeling(usize),
    /// A Merkle path of this depth.
    Merkle(usize),
    /// [`Mixed::sample`] of this size.
    Mixed(usize),
    /// A 32 GiB PoRep partition of this many challenges: the real partition's mix.
    Porep(usize),
    /// The Poseidon work of this many challenges of a 32 GiB partition (column hashes,
    /// tree_c and tree_r_last paths, comm_r), without its SHA-256.
    Poseidon(usize),
    /// A WindowPoSt partition of this many 32 GiB sectors, ten challenges each (2,349 make
    /// the real partition).
    Post(usize),
    /// A 32 GiB SnapDeals partition of this many challenges (86 make the real partition;
    /// the apex tree, 127 SHA-256 hashes, is there at any size).
    Snap(usize),
}

/// Partitions sampled in this process, by workload.
type Sampled<C> = OnceLock<Mutex<HashMap<Workload, C>>>;

/// The partition sampled for `workload`, made by `sample` the first time (a witness takes the
/// circuit's own hashing, so runs measure synthesis alone).
fn sampled_once<C: Clone>(map: &Sampled<C>, workload: Workload, sample: impl FnOnce() -> C) -> C {
    let mut sampled = map
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    sampled.entry(workload).or_insert_with(sample).clone()
}

/// A workload's circuit.
#[derive(Clone, Debug)]
pub enum BenchCircuit {
    /// Labels and SHA-256 Merkle paths.
    Sha256(Mixed),
    /// A PoRep partition.
    Partition(Partition),
    /// A WindowPoSt partition.
    Post(PostPartition),
    /// A SnapDeals partition.
    Snap(SnapPartition),
}

impl Circuit<Fr> for BenchCircuit {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self {
            BenchCircuit::Sha256(circuit) => circuit.synthesize(cs),
            BenchCircuit::Partition(circuit) => circuit.synthesize(cs),
            BenchCircuit::Post(circuit) => circuit.synthesize(cs),
            BenchCircuit::Snap(circuit) => circuit.synthesize(cs),
        }
    }
}

impl Workload {
    /// The workload called `name` (`porep`, `poseidon`, `post`, `snap`, `labeling`,
    /// `merkle`, `mixed`), with `size` or its default (1 challenge, 1 challenge, 2 sectors,
    /// 2 challenges, 1 label, depth 8, mixed 2).
    pub fn by_name(name: &str, size: Option<usize>) -> Result<Workload, String> {
        match name {
            "porep" => Ok(Workload::Porep(size.unwrap_or(1))),
            "poseidon" => Ok(Workload::Poseidon(size.unwrap_or(1))),
            "labeling" => Ok(Workload::Labeling(size.unwrap_or(1))),
            "merkle" => Ok(Workload::Merkle(size.unwrap_or(8))),
            "mixed" => Ok(Workload::Mixed(size.unwrap_or(2))),
            "post" => Ok(Workload::Post(size.unwrap_or(2))),
            "snap" => Ok(Workload::Snap(size.unwrap_or(2))),
            other => Err(format!(
                "unknown circuit `{other}` (known: porep, poseidon, post, snap, labeling, \
                 merkle, mixed)"
            )),
        }
    }

    /// The name and size [`Workload::by_name`] takes back.
    pub fn name_and_size(&self) -> (&'static str, usize) {
        match *self {
            Workload::Labeling(n) => ("labeling", n),
            Workload::Merkle(depth) => ("merkle", depth),
            Workload::Mixed(n) => ("mixed", n),
            Workload::Porep(n) => ("porep", n),
            Workload::Poseidon(n) => ("poseidon", n),
            Workload::Post(n) => ("post", n),
            Workload::Snap(n) => ("snap", n),
        }
    }

    /// A readable name with the size.
    pub fn label(&self) -> String {
        match self {
            Workload::Labeling(n) => format!("labeling x{n}"),
            Workload::Merkle(depth) => format!("merkle depth {depth}"),
            Workload::Mixed(n) => format!("mixed {n}"),
            Workload::Porep(n) => format!("porep 32GiB x{n}"),
            Workload::Poseidon(n) => format!("poseidon 32GiB x{n}"),
            Workload::Post(n) => format!("window-post 32GiB x{n}"),
            Workload::Snap(n) => format!("snapdeals 32GiB x{n}"),
        }
    }

    /// The workload's circuit, built with `gadgets`. A partition's witness is sampled once
    /// per process (it takes the circuit's own hashing), so runs measure synthesis alone.
    pub fn circuit(&self, gadgets: GadgetSet) -> BenchCircuit {
        match *self {
            Workload::Labeling(n) => BenchCircuit::Sha256(Mixed {
                labels: (0..n)
                    .map(|i| Labeling::sample(i as u64, gadgets))
                    .collect(),
                paths: Vec::new(),
            }),
            Workload::Merkle(depth) => BenchCircuit::Sha256(Mixed {
                labels: Vec::new(),
                paths: vec![MerklePath::sample(7, depth, gadgets)],
            }),
            Workload::Mixed(n) => BenchCircuit::Sha256(Mixed::sample(n, gadgets)),
            Workload::Porep(n) | Workload::Poseidon(n) => {
                static SAMPLED: Sampled<Partition> = OnceLock::new();
                let parts = match *self {
                    Workload::Porep(_) => PartitionParts::ALL,
                    _ => PartitionParts::POSEIDON,
                };
                let partition = sampled_once(&SAMPLED, *self, || {
                    Partition::sample(SectorShape::GIB_32, parts, n, 1, gadgets)
                });
                BenchCircuit::Partition(partition.with_gadgets(gadgets))
            }
            Workload::Post(sectors) => {
                static SAMPLED: Sampled<PostPartition> = OnceLock::new();
                let post = sampled_once(&SAMPLED, *self, || {
                    PostPartition::sample(
                        SectorShape::GIB_32,
                        sectors,
                        WINDOW_POST_CHALLENGES,
                        1,
                        gadgets,
                    )
                });
                BenchCircuit::Post(post.with_gadgets(gadgets))
            }
            Workload::Snap(challenges) => {
                static SAMPLED: Sampled<SnapPartition> = OnceLock::new();
                let snap = sampled_once(&SAMPLED, *self, || {
                    SnapPartition::sample(SectorShape::GIB_32, challenges, 1, gadgets)
                });
                BenchCircuit::Snap(snap.with_gadgets(gadgets))
            }
        }
    }

    /// Synthesizes the workload built with `gadgets`, with `options`; returns its shape and,
    /// with the pool on, the pool's counters.
    pub fn synthesize(
        &self,
        gadgets: GadgetSet,
        options: &SynthesisOptions,
    ) -> Result<(Shape, Option<PoolStats>), Error> {
        let mut assignment = ProvingAssignment::<Fr>::with_options(options)?;
        assignment.synthesize(self.circuit(gadgets))?;
        let stats = assignment.pool_stats();
        let vectors = assignment.into_vectors()?;
        Ok((vectors.shape(), stats))
    }

    /// The witness of one circuit built with `gadgets` against `recording`, into
    /// `buffers`' spare vectors when `recycled`, through the native witness paths when
    /// `native`.
    pub fn witness(
        &self,
        recording: &Recording<Fr>,
        buffers: &mut ProvingBuffers<Fr>,
        gadgets: GadgetSet,
        (recycled, native): (bool, bool),
    ) -> Result<Witness<Fr>, Error> {
        let circuit = self.circuit(gadgets);
        match (recycled, native) {
            (true, true) => buffers.witness(recording, circuit),
            (false, true) => recording.witness(circuit),
            (recycled, false) => {
                let mut witness = if recycled {
                    buffers.take_spare()
                } else {
                    Witness::default()
                };
                constraint_path_witness(circuit, &mut witness)?;
                Ok(witness)
            }
        }
    }

    /// Evaluates `witness` against `recording`, into `buffers` when `recycled` (else into
    /// fresh vectors, dropped).
    pub fn evaluate(
        recording: &Recording<Fr>,
        buffers: &mut ProvingBuffers<Fr>,
        witness: Witness<Fr>,
        recycled: bool,
    ) -> Result<(), Error> {
        if recycled {
            buffers.evaluate(recording, witness).map(drop)
        } else {
            recording.evaluate(witness).map(drop)
        }
    }

    /// One run of `variant`, a pre-compiled or drop-in one, on the calling thread's pool (the
    /// variant's threads are [`Variant::with_settings`]'s): `buffers` holds one set per rayon
    /// thread (the first serves the one-circuit path); `kept`, the storage the drop-in keeps
    /// between batches with retention.
    pub fn synthesize_precompiled(
        &self,
        recording: &Recording<Fr>,
        variant: &Variant,
        buffers: &mut [ProvingBuffers<Fr>],
        kept: &mut Vec<ProverVectors<Fr>>,
    ) -> Result<(), Error> {
        let gadgets = variant.gadgets;
        match variant.path {
            Path::Direct => Ok(()),
            Path::Recorded { recycled, native } => {
                let buffers = &mut buffers[0];
                let witness = self.witness(recording, buffers, gadgets, (recycled, native))?;
                Self::evaluate(recording, buffers, witness, recycled)
            }
            Path::PerThread { recycled } => buffers.par_iter_mut().try_for_each(|buffers| {
                let witness = self.witness(recording, buffers, gadgets, (recycled, true))?;
                Self::evaluate(recording, buffers, witness, recycled)
            }),
            Path::DropIn { warm, retained } => {
                let circuits = [(); 2].map(|_| self.circuit(GadgetSet::Synthpool));
                let mut members = Vec::with_capacity(2);
                for (index, circuit) in circuits.into_iter().enumerate() {
                    let vectors = if !warm && index == 0 {
                        tuning::record_first_member(circuit)?.1
                    } else if retained {
                        recording.synthesize_into(circuit, kept.pop().unwrap_or_default())?
                    } else {
                        recording.synthesize(circuit)?
                    };
                    members.push(vectors);
                }
                if retained {
                    *kept = members;
                }
                Ok(())
            }
        }
    }
}

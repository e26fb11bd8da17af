//! Timing and proving with synthpool (the patched build only).

use std::time::Instant;

use bellperson::groth16;
use bellperson::Circuit;
use blstrs::{Bls12, Scalar as Fr};
use rand::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::precompiled::{ProvingBuffers, Recording};

use crate::Error;

/// Times or proves `circuit`, as `mode` says.
pub fn run<C: Circuit<Fr> + Clone + Send>(
    circuit: C,
    inputs: &[Fr],
    mode: &str,
    reps: usize,
) -> Result<(), Error> {
    if let Some(file) = std::env::var_os(RECORDING) {
        return opened(circuit, std::path::Path::new(&file), mode);
    }
    let start = Instant::now();
    let recording = Recording::<Fr>::record(circuit.clone())?;
    let constraints = recording.shape().constraints;
    let record_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut buffers = ProvingBuffers::default();
    let direct = synthpool::synthesize(circuit.clone())?;
    // Into fresh vectors, then over them again, as every later repetition of `pce` writes.
    for vectors in ["fresh", "recycled"] {
        if *buffers.synthesize(&recording, circuit.clone())? != direct {
            return Err(
                format!("pre-compiled vectors ({vectors}) differ from direct synthesis").into(),
            );
        }
    }
    // Everything above ran on the pool's threads (a PoRep or SnapDeals partition's
    // challenges, PoSt's chunks of sectors spread over them): the same vectors as one
    // thread, where they run one after another, and as a first member's recording pass.
    let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let copy = circuit.clone();
    if one_thread.install(move || synthpool::synthesize(copy))? != direct {
        return Err("direct synthesis on the pool's threads differs from one thread".into());
    }
    if synthpool::tuning::record_first_member(circuit.clone())?.1 != direct {
        return Err("a first member's vectors differ from direct synthesis".into());
    }
    drop(direct);
    if mode == "prove" {
        return prove(circuit, inputs);
    }
    if mode == "fresh" || mode == "pss" {
        return in_fresh_processes(circuit, &recording, &mut buffers, mode, reps);
    }

    let per_constraint =
        |from: Instant, to: Instant| (to - from).as_nanos() as f64 / constraints as f64;
    let (mut total, mut witness, mut evaluation) = (vec![], vec![], vec![]);
    for circuit in vec![circuit; reps] {
        let t0 = Instant::now();
        match mode {
            "pce" => {
                let w = buffers.witness(&recording, circuit)?;
                let t1 = Instant::now();
                buffers.evaluate(&recording, w)?;
                witness.push(per_constraint(t0, t1));
                evaluation.push(per_constraint(t1, Instant::now()));
            }
            "direct" => drop(synthpool::synthesize(circuit)?),
            // What a first batch costs per member it records: recording while
            // synthesizing directly, and checking the recording reproduces the vectors.
            "first" => drop(synthpool::tuning::record_first_member(circuit)?),
            "none" => {}
            other => {
                return Err(format!(
                    "mode `{other}`: pce, direct, first, none, prove, fresh, pss, bellperson or \
                     digest"
                )
                .into())
            }
        }
        total.push(per_constraint(t0, Instant::now()));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let split = if mode == "pce" {
        format!(
            " (witness {:.1}, evaluation {:.1})",
            median(witness),
            median(evaluation)
        )
    } else {
        String::new()
    };
    println!(
        "{constraints} constraints, record {record_ms:.0} ms, recording {:.2} bytes per nonzero \
         ({} nonzeros), {mode}: {:.1} ns per constraint{split}",
        recording.bytes_per_nonzero(),
        recording.nonzeros(),
        median(total),
    );
    Ok(())
}

/// Two members of `circuit` proven by bellperson and by the drop-in (cold, then warm) from
/// the same rng: the proofs byte-identical and verified against `inputs`.
fn prove<C: Circuit<Fr> + Clone + Send>(circuit: C, inputs: &[Fr]) -> Result<(), Error> {
    let mut rng = XorShiftRng::from_seed([9; 16]);
    let start = Instant::now();
    let params = groth16::generate_random_parameters::<Bls12, _, _>(circuit.clone(), &mut rng)?;
    println!("parameters: {:.1} s", start.elapsed().as_secs_f64());
    let pvk = groth16::prepare_verifying_key(&params.vk);
    let bytes = |proofs: &[groth16::Proof<Bls12>]| -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        for proof in proofs {
            proof.write(&mut out)?;
        }
        Ok(out)
    };
    let members = || vec![circuit.clone(); 2];
    let theirs = groth16::create_random_proof_batch(
        members(),
        &params,
        &mut XorShiftRng::from_seed([3; 16]),
    )?;
    for proof in &theirs {
        if !groth16::verify_proof(&pvk, proof, inputs)? {
            return Err("bellperson's proof does not verify".into());
        }
    }
    let theirs = bytes(&theirs)?;
    // Cold (recorded) and warm in this process: no recording from another.
    synthpool::groth16::set_cache_dir(None);
    for batch in ["cold", "warm"] {
        let start = Instant::now();
        let ours = synthpool::groth16::v0_27::create_random_proof_batch(
            members(),
            &params,
            &mut XorShiftRng::from_seed([3; 16]),
        )?;
        // Byte-identical to bellperson's verified proofs, so verified too.
        if bytes(&ours)? != theirs {
            return Err(format!("the drop-in's {batch} proofs differ from bellperson's").into());
        }
        println!(
            "drop-in, {batch}: 2 proofs byte-identical to bellperson's, verified, {:.1} s",
            start.elapsed().as_secs_f64()
        );
    }
    let stats = synthpool::groth16::stats::<Fr>();
    println!(
        "drop-in store: recorded {}, trusted {}, evaluated batches {}",
        stats.recorded, stats.trusted, stats.evaluated_batches
    );
    Ok(())
}

/// The environment variable that makes the tool a child of `fresh` or `pss`: the recording
/// file it opens.
const RECORDING: &str = "REAL_CIRCUIT_RECORDING";

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// `fresh`: the recording saved to a file (in the page cache once written), then `reps`
/// fresh processes each open it in place and synthesize from it twice (their first and
/// second synthesis), against this warm process's synthesis into recycled buffers in the
/// same run. `pss`: two processes open it and synthesize from it, then, both alive, report
/// the resident and proportional memory of its mapping.
fn in_fresh_processes<C: Circuit<Fr> + Clone + Send>(
    circuit: C,
    recording: &Recording<Fr>,
    buffers: &mut ProvingBuffers<Fr>,
    mode: &str,
    reps: usize,
) -> Result<(), Error> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("recording.rec");
    recording.save(&file)?;
    let bytes = std::fs::metadata(&file)?.len();
    let constraints = recording.shape().constraints as f64;
    let child = |mode: &str| {
        let mut command = std::process::Command::new(std::env::current_exe()?);
        command
            .args(std::env::args().skip(1).take(1))
            .arg(mode)
            .env(RECORDING, &file)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        Ok::<_, std::io::Error>(command)
    };
    if mode == "pss" {
        return pss(child("hold")?, bytes);
    }
    let mut warm = Vec::new();
    let mapped = Recording::<Fr>::map_unverified(&file)?;
    let mut mapped_buffers = ProvingBuffers::default();
    mapped_buffers.synthesize(&mapped, circuit.clone())?;
    let mut warm_mapped = Vec::new();
    for circuit in vec![circuit; reps] {
        let start = Instant::now();
        buffers.synthesize(recording, circuit.clone())?;
        warm.push(start.elapsed().as_nanos() as f64 / constraints);
        let start = Instant::now();
        mapped_buffers.synthesize(&mapped, circuit)?;
        warm_mapped.push(start.elapsed().as_nanos() as f64 / constraints);
    }
    let (mut open, mut first, mut first_evaluation, mut later) = (vec![], vec![], vec![], vec![]);
    for _ in 0..reps {
        let output = child("opened")?.output()?;
        let report = String::from_utf8_lossy(&output.stdout).into_owned();
        if !output.status.success() {
            return Err(format!("a fresh process failed: {report}").into());
        }
        let field = |name: &str| -> Result<f64, Error> {
            let value = report
                .split_whitespace()
                .find_map(|word| word.strip_prefix(name)?.strip_prefix('='))
                .ok_or_else(|| format!("no {name} in `{report}`"))?;
            Ok(value.parse()?)
        };
        open.push(field("open_ms")?);
        first.push(field("first_ns")?);
        first_evaluation.push(field("first_evaluation_ns")?);
        later.push(field("later_ns")?);
    }
    let warm = median(warm);
    let (first, later) = (median(first), median(later));
    println!(
        "fresh processes ({reps}), recording {bytes} bytes in the page cache: open {:.2} ms, \
         first synthesis {first:.1} ns per constraint ({:.2}x warm; evaluation {:.1}), later \
         ones {later:.1} \
         ({:.2}x); warm process {warm:.1} ns per constraint, from the file mapped in it {:.1}",
        median(open),
        first / warm,
        median(first_evaluation),
        later / warm,
        median(warm_mapped),
    );
    Ok(())
}

/// Two processes of `command` at once; the mapping's resident and proportional sizes each
/// reports while both are alive.
fn pss(mut command: std::process::Command, bytes: u64) -> Result<(), Error> {
    use std::io::{BufRead, BufReader, Write};
    let mut children = vec![command.spawn()?, command.spawn()?];
    let mut readers = Vec::new();
    for child in &mut children {
        let mut reader = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        // Past what it says of the circuit, to the word that it holds the recording.
        let mut line = String::new();
        while line.trim() != "ready" {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Err("a holding process ended before it was ready".into());
            }
        }
        readers.push(reader);
    }
    // Both have mapped and read the recording: now each measures.
    for child in &mut children {
        writeln!(child.stdin.as_mut().ok_or("no stdin")?, "measure")?;
    }
    for (child, mut reader) in children.into_iter().zip(readers) {
        let mut report = String::new();
        reader.read_line(&mut report)?;
        drop(child.stdin);
        println!("{} (file {} kB)", report.trim(), bytes / 1024);
    }
    Ok(())
}

/// A child of `fresh` or `pss`: opens the recording in place and synthesizes from it.
fn opened<C: Circuit<Fr> + Clone + Send>(
    circuit: C,
    file: &std::path::Path,
    mode: &str,
) -> Result<(), Error> {
    let start = Instant::now();
    let recording = Recording::<Fr>::map_unverified(file)?;
    let open_ms = start.elapsed().as_secs_f64() * 1e3;
    let constraints = recording.shape().constraints as f64;
    let mut buffers = ProvingBuffers::default();
    let start = Instant::now();
    let witness = buffers.witness(&recording, circuit.clone())?;
    let evaluating = Instant::now();
    buffers.evaluate(&recording, witness)?;
    let first = start.elapsed().as_nanos() as f64 / constraints;
    let first_evaluation = evaluating.elapsed().as_nanos() as f64 / constraints;
    let mut synthesis = || -> Result<f64, Error> {
        let start = Instant::now();
        buffers.synthesize(&recording, circuit.clone())?;
        Ok(start.elapsed().as_nanos() as f64 / constraints)
    };
    if mode == "opened" {
        // Its buffers recycled from the third synthesis on (the second still makes the
        // witness's vectors afresh).
        let later = median(vec![synthesis()?, synthesis()?, synthesis()?]);
        println!(
            "open_ms={open_ms} first_ns={first} first_evaluation_ns={first_evaluation} \
             later_ns={later}"
        );
        return Ok(());
    }
    println!("ready");
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    let smaps = std::fs::read_to_string("/proc/self/smaps")?;
    let name = file.to_string_lossy();
    let mut lines = smaps.lines().skip_while(|line| !line.ends_with(name.as_ref()));
    lines.next().ok_or("the recording is not mapped")?;
    let size = |key: &str, lines: &[&str]| {
        lines
            .iter()
            .find_map(|line| line.strip_prefix(key))
            .and_then(|rest| rest.trim().trim_end_matches(" kB").parse::<u64>().ok())
    };
    let entry: Vec<&str> = lines.take_while(|line| line.contains(':')).collect();
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup")?;
    let totals: Vec<&str> = rollup.lines().collect();
    println!(
        "process {}: recording mapped Rss {} kB, Pss {} kB; whole process Rss {} kB, Pss {} kB",
        std::process::id(),
        size("Rss:", &entry).ok_or("no Rss")?,
        size("Pss:", &entry).ok_or("no Pss")?,
        size("Rss:", &totals).ok_or("no Rss")?,
        size("Pss:", &totals).ok_or("no Pss")?,
    );
    Ok(())
}

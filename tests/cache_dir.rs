//! The recording cache directory is trusted only when it is the process's own. A directory
//! another user made first (a second user, in a process of its own) is not used: the batch
//! records in memory, logs one warning naming the directory, its owner and mode, and leaves
//! that user's file alone; saving a recording into it is an error. Nor is a directory
//! writable by group or others, a symbolic link, or one below a directory others could
//! replace it in. What synthpool makes has mode 0755 (directories) and 0644 (files)
//! whatever the umask. The cases that change users need root (CI runs as root); elsewhere
//! they say so and pass.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use bellperson_027::groth16::{self, Parameters};
use blstrs::{Bls12, Scalar as Fr};
use common::NumCircuit;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;
use synthpool::groth16::v0_27 as ours;

/// The variable naming what a child process does, and where.
const CHILD: &str = "SYNTHPOOL_CACHE_DIR_CHILD";
/// The user `nobody`.
const NOBODY: u32 = 65534;

fn params() -> Parameters<Bls12> {
    let blank = NumCircuit { x: None, rounds: 1 };
    groth16::generate_random_parameters(blank, &mut XorShiftRng::seed_from_u64(3)).unwrap()
}

fn blank() -> NumCircuit {
    NumCircuit { x: None, rounds: 1 }
}

fn member() -> NumCircuit {
    NumCircuit {
        x: Some(Fr::from(5)),
        rounds: 1,
    }
}

/// Warnings logged by synthpool in this process.
static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Warnings;

impl log::Log for Warnings {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }
    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            WARNINGS.lock().unwrap().push(record.args().to_string());
        }
    }
    fn flush(&self) {}
}

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// A scratch directory of its own, under a sticky world-writable one as `/var/tmp` is.
fn scratch(name: &str) -> PathBuf {
    let top =
        std::env::temp_dir().join(format!("synthpool-cache-dir-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&top);
    std::fs::create_dir_all(&top).unwrap();
    std::fs::set_permissions(&top, std::fs::Permissions::from_mode(0o1777)).unwrap();
    top
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

/// The child's entry: saves a recording into the directory its variable names (making it
/// where missing).
#[test]
fn child() {
    let Ok(dir) = std::env::var(CHILD) else {
        return;
    };
    let path = ours::save_recording(blank(), &params().vk, Path::new(&dir)).expect("saved");
    println!("saved {}", path.display());
}

fn child_saves(dir: &Path, user: Option<u32>, umask: Option<&str>) {
    let binary = std::env::current_exe().unwrap();
    let mut command = match umask {
        Some(umask) => {
            let mut sh = Command::new("sh");
            sh.arg("-c")
                .arg(format!(
                    "umask {umask} && exec \"$0\" --exact child --nocapture"
                ))
                .arg(&binary);
            sh
        }
        None => {
            let mut direct = Command::new(&binary);
            direct.args(["--exact", "child", "--nocapture"]);
            direct
        }
    };
    command.env(CHILD, dir);
    if let Some(user) = user {
        command.uid(user).gid(user);
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success() && String::from_utf8_lossy(&output.stdout).contains("saved"),
        "{}\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn not_own(dir: &Path) -> String {
    let err = ours::save_recording(blank(), &params().vk, dir).expect_err("not its own");
    let message = err.chain();
    assert!(message.contains(&dir.display().to_string()), "{message}");
    assert!(message.contains("not a directory to trust"), "{message}");
    message
}

/// One test, in order: the drop-ins' settings and store are the process's.
#[test]
fn the_cache_directory_is_trusted_only_when_it_is_the_process_s_own() {
    log::set_logger(&Warnings).unwrap();
    log::set_max_level(log::LevelFilter::Warn);
    another_user_s_directory_is_not_used();
    modes_are_explicit_whatever_the_umask();
    directories_others_can_write_or_replace_are_refused();
}

fn another_user_s_directory_is_not_used() {
    if !running_as_root() {
        eprintln!("not root: a second user cannot be tried here");
        return;
    }
    let top = scratch("nobody");
    let theirs = top.join("recordings");
    // The second user makes the cache directory first, and a recording in it.
    child_saves(&theirs, Some(NOBODY), None);
    assert_eq!(std::fs::metadata(&theirs).unwrap().uid(), NOBODY);
    let planted: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&theirs)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    assert_eq!(planted.len(), 1);

    // This process's batch does not use it: recorded in memory, one warning, their file
    // untouched.
    synthpool::groth16::set_cache_dir(Some(theirs.clone()));
    synthpool::groth16::clear::<Fr>();
    let before = synthpool::groth16::stats::<Fr>();
    let prove = || {
        let remake = |_: usize| Ok::<_, String>(member());
        let mut rng = XorShiftRng::seed_from_u64(9);
        ours::create_random_proof_batch_remaking(vec![member()], remake, &params(), false, &mut rng)
            .unwrap()
    };
    let bellperson = groth16::create_random_proof_batch(
        vec![member()],
        &params(),
        &mut XorShiftRng::seed_from_u64(9),
    )
    .unwrap();
    for _ in 0..2 {
        synthpool::groth16::clear::<Fr>();
        assert!(prove() == bellperson, "bellperson's proof");
    }
    let after = synthpool::groth16::stats::<Fr>();
    assert_eq!(after.loaded - before.loaded, 0, "{after:?}");
    assert_eq!(after.saved - before.saved, 0, "{after:?}");
    assert_eq!(after.recorded - before.recorded, 2, "{after:?}");
    let warnings: Vec<String> = WARNINGS
        .lock()
        .unwrap()
        .iter()
        .filter(|warning| warning.contains(&theirs.display().to_string()))
        .cloned()
        .collect();
    assert_eq!(warnings.len(), 1, "one warning: {warnings:?}");
    assert!(
        warnings[0].contains(&format!("owner uid {NOBODY}")) && warnings[0].contains("mode 0755"),
        "{}",
        warnings[0]
    );
    for (path, bytes) in &planted {
        assert!(
            std::fs::read(path).unwrap() == *bytes,
            "their file untouched"
        );
    }
    let message = not_own(&theirs);
    assert!(
        message.contains(&format!("owner uid {NOBODY}")),
        "{message}"
    );
    synthpool::groth16::set_cache_dir(None);
    std::fs::remove_dir_all(top).unwrap();
}

fn modes_are_explicit_whatever_the_umask() {
    let top = scratch("umask");
    let dir = top.join("a/b/recordings");
    child_saves(&dir, None, Some("000"));
    for made in [top.join("a"), top.join("a/b"), dir.clone()] {
        assert_eq!(mode(&made), 0o755, "{}", made.display());
    }
    for file in std::fs::read_dir(&dir).unwrap() {
        let file = file.unwrap().path();
        assert_eq!(mode(&file), 0o644, "{}", file.display());
    }
    // Under a strict umask too: owner-only would keep other proving users out of nothing.
    let strict = top.join("strict");
    child_saves(&strict, None, Some("077"));
    assert_eq!(mode(&strict), 0o755);
    std::fs::remove_dir_all(top).unwrap();
}

fn directories_others_can_write_or_replace_are_refused() {
    let top = scratch("shapes");
    let dir = top.join("recordings");
    std::fs::create_dir(&dir).unwrap();
    // Its own, 0755: used.
    ours::save_recording(blank(), &params().vk, &dir).expect("its own directory");
    // Writable by the group, or by others.
    for loose in [0o775, 0o757, 0o777] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(loose)).unwrap();
        let message = not_own(&dir);
        assert!(message.contains(&format!("mode {loose:04o}")), "{message}");
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A symbolic link to a good directory.
    let link = top.join("link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    assert!(not_own(&link).contains("symbolic link"));
    // Below a directory anyone may write without the sticky bit: anyone could rename ours
    // away and put theirs in its place.
    let open = top.join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let below = open.join("recordings");
    let message = not_own(&below);
    assert!(message.contains(&open.display().to_string()), "{message}");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
    ours::save_recording(blank(), &params().vk, &below).expect("below a sticky directory");
    if running_as_root() {
        // Another user's directory above.
        let theirs = top.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
        let message = not_own(&theirs.join("recordings"));
        assert!(
            message.contains(&format!("owner uid {NOBODY}")),
            "{message}"
        );
    }
    std::fs::remove_dir_all(top).unwrap();
}

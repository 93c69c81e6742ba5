//! Finding (or installing) the device toolchain: a `rustc`/`cargo` that can
//! build `core` for `nvptx64-nvidia-cuda` (rustc >= 1.96 with the library
//! source, used through `RUSTC_BOOTSTRAP=1 -Zbuild-std=core`) and, optionally,
//! `ptxas`.
//!
//! Where each tool is looked for, first hit wins:
//!
//! | tool | places |
//! |---|---|
//! | rustc | `$RUSTC_DEVICE`, `/usr/bin/rustc` (Debian `rustc-web`) |
//! | cargo | `$CARGO_DEVICE`, the `cargo` beside that rustc |
//! | ptxas | `$PTXAS`, `$BATON_TOOLS_DIR`, baton's repository `.tools/` (found from this crate's manifest directory), `$XDG_CACHE_HOME/baton/tools` (or `~/.cache/baton/tools`), `ptxas` on `PATH`, `/usr/local/cuda/bin/ptxas` |

use crate::error::BuildError;
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The oldest rustc (1.x) that builds baton's kernels.
pub const MIN_RUSTC_MINOR: u32 = 96;

/// Where ptxas lives inside a tools directory (the `nvidia-cuda-nvcc` wheel).
pub const PTXAS_IN_TOOLS: &str = "cuda-nvcc/nvidia/cu13/bin/ptxas";

/// The device toolchain found.
///
/// ```no_run
/// let tc = baton_build::Toolchain::find()?;
/// println!("rustc {}", tc.rustc.display());
/// # Ok::<(), baton_build::BuildError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toolchain {
    /// rustc that can build `core` for nvptx64.
    pub rustc: PathBuf,
    /// The cargo that drives it.
    pub cargo: PathBuf,
    /// ptxas, when found (the PTX is then checked and hot kernels held to
    /// no spills).
    pub ptxas: Option<PathBuf>,
}

/// The installer script shipped with this crate (idempotent; installs Debian's
/// `rustc-web cargo-web rust-web-src` and the `nvidia-cuda-nvcc` wheel's ptxas).
///
/// ```
/// assert!(baton_build::toolchain::install_script().ends_with("install-device-toolchain.sh"));
/// ```
pub fn install_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("install-device-toolchain.sh")
}

/// The one command that installs the toolchain.
///
/// ```
/// assert!(baton_build::toolchain::install_command().starts_with("bash "));
/// ```
pub fn install_command() -> String {
    format!("bash {}", install_script().display())
}

/// baton's repository `.tools` directory, when this crate is used from a
/// checkout of baton (`crates/baton-build` → `../../.tools`).
fn repo_tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools")
}

/// The per-user tools directory: `$XDG_CACHE_HOME/baton/tools` or
/// `~/.cache/baton/tools` (what the installer uses outside a baton checkout).
///
/// ```
/// if let Some(dir) = baton_build::toolchain::user_tools_dir() {
///     assert!(dir.ends_with("baton/tools"));
/// }
/// ```
pub fn user_tools_dir() -> Option<PathBuf> {
    if let Some(x) = env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(x).join("baton/tools"));
    }
    env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/baton/tools"))
}

/// Parses `rustc 1.96.0 (…)` into its minor version.
///
/// ```
/// assert_eq!(baton_build::toolchain::rustc_minor("rustc 1.96.0 (ac68faa20 2026-05-25)"), Some(96));
/// assert_eq!(baton_build::toolchain::rustc_minor("cargo 1.95.0"), None);
/// ```
pub fn rustc_minor(version: &str) -> Option<u32> {
    let v = version.strip_prefix("rustc ")?.split_whitespace().next()?;
    let mut parts = v.split('.');
    if parts.next()? != "1" {
        return None;
    }
    parts.next()?.parse().ok()
}

/// Why `rustc` at `path` cannot build nvptx kernels, or `None` when it can.
fn rustc_problem(path: &Path) -> Option<String> {
    if !path.is_file() {
        return Some(format!("{} not found", path.display()));
    }
    let version = match Command::new(path).arg("--version").output() {
        Ok(o) => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Err(e) => return Some(format!("{} cannot run: {e}", path.display())),
    };
    match rustc_minor(&version) {
        Some(m) if m >= MIN_RUSTC_MINOR => {}
        _ => {
            return Some(format!(
                "{} is `{version}`; need rustc >= 1.{MIN_RUSTC_MINOR}",
                path.display()
            ));
        }
    }
    let sysroot = Command::new(path)
        .args(["--print", "sysroot"])
        .output()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .unwrap_or_default();
    let core = sysroot.join("lib/rustlib/src/rust/library/core");
    if !core.is_dir() {
        return Some(format!(
            "{} has no library source at {} (needed for -Zbuild-std=core)",
            path.display(),
            core.display()
        ));
    }
    None
}

fn on_path(exe: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?)
        .map(|d| d.join(exe))
        .find(|p| p.is_file())
}

/// Every place ptxas is looked for, in order (see the module documentation).
///
/// ```
/// let places = baton_build::toolchain::ptxas_candidates();
/// assert!(places.iter().any(|p| p.ends_with("bin/ptxas")));
/// ```
pub fn ptxas_candidates() -> Vec<PathBuf> {
    let mut c = Vec::new();
    if let Some(p) = env::var_os("PTXAS").filter(|v| !v.is_empty()) {
        c.push(PathBuf::from(p));
    }
    if let Some(d) = env::var_os("BATON_TOOLS_DIR").filter(|v| !v.is_empty()) {
        c.push(PathBuf::from(d).join(PTXAS_IN_TOOLS));
    }
    c.push(repo_tools_dir().join(PTXAS_IN_TOOLS));
    if let Some(d) = user_tools_dir() {
        c.push(d.join(PTXAS_IN_TOOLS));
    }
    if let Some(p) = on_path("ptxas") {
        c.push(p);
    }
    c.push(PathBuf::from("/usr/local/cuda/bin/ptxas"));
    c
}

impl Toolchain {
    /// Finds the toolchain (see the module documentation). Errors:
    /// [`BuildError::ToolchainMissing`] naming what is missing and the one
    /// command to run ([`install_command`]). A missing ptxas is not an
    /// error: [`Toolchain::ptxas`] is then `None`.
    pub fn find() -> Result<Toolchain, BuildError> {
        let missing = |what: String| BuildError::ToolchainMissing {
            what,
            install: install_command(),
        };
        let rustc = match env::var_os("RUSTC_DEVICE").filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => PathBuf::from("/usr/bin/rustc"),
        };
        if let Some(problem) = rustc_problem(&rustc) {
            return Err(missing(format!(
                "{problem} (a rustc that builds core for nvptx64-nvidia-cuda; set RUSTC_DEVICE to use another)"
            )));
        }
        let cargo = match env::var_os("CARGO_DEVICE").filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => rustc.with_file_name("cargo"),
        };
        if !cargo.is_file() {
            return Err(missing(format!(
                "{} not found (the cargo of {}; set CARGO_DEVICE to use another)",
                cargo.display(),
                rustc.display()
            )));
        }
        let ptxas = ptxas_candidates().into_iter().find(|p| p.is_file());
        Ok(Toolchain {
            rustc,
            cargo,
            ptxas,
        })
    }

    /// Runs the installer ([`install_script`], idempotent), then
    /// [`Toolchain::find`].
    pub fn install_and_find() -> Result<Toolchain, BuildError> {
        let script = install_script();
        let out = Command::new("bash")
            .arg(&script)
            .output()
            .map_err(|source| BuildError::Io {
                doing: format!("running {}", script.display()),
                source,
            })?;
        if !out.status.success() {
            return Err(BuildError::ToolchainMissing {
                what: format!(
                    "{} failed ({}):\n{}{}",
                    script.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ),
                install: install_command(),
            });
        }
        Toolchain::find()
    }
}

/// Variables of the calling cargo (a build script's environment) that must
/// not reach the nested nvptx build: target dir, flags, wrappers, jobserver,
/// the outer package's metadata.
///
/// ```
/// use baton_build::toolchain::leaks_into_nested_cargo as leaks;
/// assert!(leaks("RUSTFLAGS") && leaks("CARGO_TARGET_DIR") && leaks("CARGO_PKG_NAME"));
/// assert!(!leaks("CARGO_HOME") && !leaks("PATH") && !leaks("HOME"));
/// ```
pub fn leaks_into_nested_cargo(var: &str) -> bool {
    const KEEP: [&str; 4] = [
        "CARGO_HOME",
        "CARGO_NET_OFFLINE",
        "CARGO_HTTP_PROXY",
        "CARGO_TERM_COLOR",
    ];
    if KEEP.contains(&var) {
        return false;
    }
    var.starts_with("CARGO")
        || var.starts_with("RUSTC")
        || var.starts_with("RUSTDOC")
        || var == "RUSTFLAGS"
        || var == "RUSTUP_TOOLCHAIN"
        || var == "MAKEFLAGS"
        || var == "MFLAGS"
        || var == "OUT_DIR"
        || var == "TARGET"
        || var == "HOST"
        || var == "PROFILE"
        || var == "OPT_LEVEL"
        || var == "DEBUG"
        || var == "NUM_JOBS"
}

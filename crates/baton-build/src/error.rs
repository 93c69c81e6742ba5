//! Typed errors of the kernel build, each naming the rule that was broken
//! and, where there is one, the fix.

use std::fmt;
use std::path::PathBuf;

/// Why rustc's PTX could not be turned into the module to embed.
///
/// ```
/// let e = baton_build::PtxError::SpecWithoutEntry { entry: "k".into() };
/// assert!(e.to_string().contains("`k`"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtxError {
    /// A `__baton_spec_*` record is not what `baton::kernel!` emits.
    BadSpecRecord {
        /// The PTX line.
        line: String,
        /// What is wrong with it.
        what: &'static str,
    },
    /// Two records for one entry.
    DuplicateSpec {
        /// The entry.
        entry: String,
    },
    /// A record whose entry is not in the module.
    SpecWithoutEntry {
        /// The entry the record names.
        entry: String,
    },
    /// An entry with a spec does not take exactly one by-value struct of
    /// `size_of::<P>()` bytes.
    EntryParams {
        /// The entry.
        entry: String,
        /// `size_of` the spec's parameter struct.
        expected_bytes: u32,
        /// The parameter list found.
        found: String,
    },
    /// The module is not laid out as rustc's NVPTX backend writes it.
    Malformed {
        /// What was expected.
        what: &'static str,
    },
}

impl fmt::Display for PtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PtxError::BadSpecRecord { line, what } => write!(
                f,
                "kernel spec record `{line}`: {what} (records come from baton::kernel!; rebuild with matching baton and baton-build)"
            ),
            PtxError::DuplicateSpec { entry } => {
                write!(
                    f,
                    "two kernel specs for the entry `{entry}`: one spec per entry"
                )
            }
            PtxError::SpecWithoutEntry { entry } => write!(
                f,
                "a kernel spec names `{entry}` but the module has no such .entry"
            ),
            PtxError::EntryParams {
                entry,
                expected_bytes,
                found,
            } => write!(
                f,
                "entry `{entry}`: expected exactly one by-value parameter struct of {expected_bytes} bytes (`.param .align A .b8 {entry}_param_0[{expected_bytes}]`), found `{found}`: declare the entry with baton::kernel! and one #[repr(C)] KernelParams argument"
            ),
            PtxError::Malformed { what } => write!(f, "unexpected PTX layout: {what}"),
        }
    }
}

impl std::error::Error for PtxError {}

/// Why the kernel build failed.
///
/// ```
/// let e = baton_build::BuildError::ToolchainMissing {
///     what: "rustc >= 1.96 with the library source".into(),
///     install: "bash tools/install-device-toolchain.sh".into(),
/// };
/// assert!(e.to_string().contains("run: bash tools/install-device-toolchain.sh"));
/// ```
#[derive(Debug)]
pub enum BuildError {
    /// The device toolchain is not there; `install` is the one command to run.
    ToolchainMissing {
        /// What is missing.
        what: String,
        /// The command that installs it.
        install: String,
    },
    /// A build setting is wrong (no target, a bad path).
    Config {
        /// The rule.
        what: String,
    },
    /// A tool could not be started or a file not read or written.
    Io {
        /// What was being done.
        doing: String,
        /// The error.
        source: std::io::Error,
    },
    /// `cargo rustc` for the kernel crate failed; its output follows.
    Cargo {
        /// The kernel crate.
        krate: PathBuf,
        /// `sm_90a` or `sm_100a`, and the variant.
        build: String,
        /// What cargo printed.
        output: String,
    },
    /// The PTX could not be rewritten.
    Ptx {
        /// The PTX file rustc wrote.
        file: PathBuf,
        /// Why.
        source: PtxError,
    },
    /// ptxas rejected the PTX.
    PtxasRejected {
        /// The PTX file.
        file: PathBuf,
        /// ptxas's log.
        log: String,
    },
    /// A kernel marked hot spills or has a stack frame.
    HotKernelSpills {
        /// The PTX file.
        file: PathBuf,
        /// `entry: N bytes stack frame, S bytes spill stores, L bytes spill loads`, one per kernel.
        kernels: Vec<String>,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::ToolchainMissing { what, install } => {
                write!(f, "device toolchain missing: {what}; run: {install}")
            }
            BuildError::Config { what } => write!(f, "baton-build: {what}"),
            BuildError::Io { doing, source } => write!(f, "{doing}: {source}"),
            BuildError::Cargo {
                krate,
                build,
                output,
            } => write!(
                f,
                "building kernel crate {} for {build} failed:\n{output}",
                krate.display()
            ),
            BuildError::Ptx { file, source } => write!(f, "{}: {source}", file.display()),
            BuildError::PtxasRejected { file, log } => {
                write!(f, "ptxas rejected {}:\n{log}", file.display())
            }
            BuildError::HotKernelSpills { file, kernels } => write!(
                f,
                "{}: hot kernels must have no spills and no stack frame (ptxas -v): {}",
                file.display(),
                kernels.join("; ")
            ),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Io { source, .. } => Some(source),
            BuildError::Ptx { source, .. } => Some(source),
            _ => None,
        }
    }
}

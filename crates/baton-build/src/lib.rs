//! # baton-build
//!
//! For a host crate's `build.rs`: builds a `no_std` kernel crate (entries
//! declared with `baton::kernel!`) into PTX for each requested target and
//! variant, writes the launch bounds and the dynamic shared-memory
//! declaration from the kernels' `KernelSpec`s, checks the result with
//! `ptxas -v` when ptxas is present (spills or a stack frame in a `hot`
//! kernel fail the release build; the debug variant's hang reports need a
//! stack frame) and writes `<name>_<target>[_debug].ptx` (plus
//! `.ptxas.txt`) to `OUT_DIR` for `include_str!`.
//!
//! ```no_run
//! // build.rs of the host crate: `fn main() { … }` around this
//! baton_build::KernelCrate::new("kernel") // the kernel crate, relative to this manifest
//!     .target(baton_build::Target::Sm90a)
//!     .variant(baton_build::Variant::Release)
//!     .variant(baton_build::Variant::Debug)
//!     .build_or_exit();
//! ```
//!
//! and in the host crate:
//!
//! ```ignore
//! static PTX: &str = baton_runtime::include_ptx!("kernel", "sm90a");
//! // = include_str!(concat!(env!("OUT_DIR"), "/kernel_sm90a.ptx"))
//! ```
//!
//! The nested build is `RUSTC_BOOTSTRAP=1 cargo rustc -Zbuild-std=core
//! --target nvptx64-nvidia-cuda --crate-type cdylib --profile baton-release
//! -- --emit=asm -C target-cpu=<sm> -C target-feature=+<ptx isa>` in an
//! environment cleaned of the outer cargo's variables, with its own target
//! directory under the host's (`target/baton-build/<target>`, shared by kernel
//! crates so `core` is built once per target), so it is incremental. The profiles `baton-release` and `baton-debug` (release with
//! debug assertions: baton's bounded, reporting mbarrier waits) are defined
//! on the command line (`lto`, `codegen-units = 1`, `opt-level = 3`,
//! `panic = "abort"`): the kernel crate's manifest needs none.
//!
//! Cargo is told to rerun the build script when a source file of the kernel
//! crate or one of its path dependencies changes (from cargo's dep-info of
//! the nested build), or when `RUSTC_DEVICE`, `CARGO_DEVICE`, `PTXAS` or
//! `BATON_TOOLS_DIR` change.
#![warn(missing_docs)]

mod error;
pub mod ptx;
pub mod ptxas_report;
pub mod toolchain;

pub use error::{BuildError, PtxError};
pub use ptx::KernelRecord;
pub use ptxas_report::EntryResources;
pub use toolchain::Toolchain;

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A GPU architecture to build for. Each pins its PTX ISA version, so a new
/// rustc cannot silently raise the driver a module needs.
///
/// ```
/// use baton_build::Target;
/// assert_eq!(Target::Sm90a.sm(), "sm_90a");
/// assert_eq!(Target::Sm100a.ptx_isa(), "ptx87");
/// assert_eq!(Target::Sm100a.file_suffix(), "sm100a");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// Hopper (H100, H200), PTX ISA 8.0.
    Sm90a,
    /// Blackwell datacenter (B200), PTX ISA 8.7 (`tcgen05 … kind::mxf4nvf4`
    /// needs it; CUDA 12.8 drivers and later load it).
    Sm100a,
}

impl Target {
    /// `-C target-cpu` and `ptxas -arch`.
    pub const fn sm(self) -> &'static str {
        match self {
            Target::Sm90a => "sm_90a",
            Target::Sm100a => "sm_100a",
        }
    }

    /// The pinned PTX ISA (`-C target-feature=+<isa>`).
    pub const fn ptx_isa(self) -> &'static str {
        match self {
            Target::Sm90a => "ptx80",
            Target::Sm100a => "ptx87",
        }
    }

    /// The target's part of the output file name.
    pub const fn file_suffix(self) -> &'static str {
        match self {
            Target::Sm90a => "sm90a",
            Target::Sm100a => "sm100a",
        }
    }
}

/// How the kernels are compiled.
///
/// ```
/// use baton_build::Variant;
/// assert_eq!(Variant::Debug.file_suffix(), "_debug");
/// assert_eq!(Variant::Release.profile(), "baton-release");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Optimized, no debug assertions: unbounded mbarrier waits.
    Release,
    /// Optimized with debug assertions: baton's waits are bounded and report
    /// the hung pipeline, role, stage and phase before they trap.
    Debug,
}

impl Variant {
    /// The variant's part of the output file name.
    pub const fn file_suffix(self) -> &'static str {
        match self {
            Variant::Release => "",
            Variant::Debug => "_debug",
        }
    }

    /// The cargo profile the nested build uses (defined on its command line).
    pub const fn profile(self) -> &'static str {
        match self {
            Variant::Release => "baton-release",
            Variant::Debug => "baton-debug",
        }
    }

    fn debug_assertions(self) -> bool {
        matches!(self, Variant::Debug)
    }
}

/// One PTX module written by [`KernelCrate::build`].
#[derive(Clone, Debug)]
pub struct BuiltPtx {
    /// Its target.
    pub target: Target,
    /// Its variant.
    pub variant: Variant,
    /// The PTX file (in the output directory).
    pub path: PathBuf,
    /// The `ptxas -v` log next to it, when ptxas ran.
    pub ptxas_report: Option<PathBuf>,
    /// The kernels' specs, in PTX order.
    pub specs: Vec<KernelRecord>,
    /// Entries declared without `baton::kernel!` (no launch bounds added).
    pub entries_without_spec: Vec<String>,
    /// What ptxas reported per entry (empty without ptxas).
    pub resources: Vec<EntryResources>,
    /// rustc's warnings for the kernel crate and the crates it builds for
    /// nvptx64 (baton's own code included), one line each
    /// ([`compiler_warnings`]). Inside a build script they are also printed
    /// as `cargo::warning` lines, since a nested build's output is
    /// otherwise never shown.
    pub warnings: Vec<String>,
}

/// What [`KernelCrate::build`] produced.
#[derive(Clone, Debug)]
pub struct Built {
    /// The toolchain used.
    pub toolchain: Toolchain,
    /// One module per target and variant, in the order requested.
    pub modules: Vec<BuiltPtx>,
}

/// A `no_std` kernel crate to build into PTX; see the crate documentation.
///
/// ```no_run
/// let built = baton_build::KernelCrate::new("kernel")
///     .target(baton_build::Target::Sm90a)
///     .build()?;
/// for m in &built.modules {
///     println!("{} ({} kernels)", m.path.display(), m.specs.len());
/// }
/// # Ok::<(), baton_build::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct KernelCrate {
    path: PathBuf,
    targets: Vec<Target>,
    variants: Vec<Variant>,
    features: Vec<String>,
    output_name: Option<String>,
    out_dir: Option<PathBuf>,
    target_dir: Option<PathBuf>,
    install_toolchain: bool,
    cargo_directives: Option<bool>,
    hot_rule: bool,
}

impl KernelCrate {
    /// The kernel crate at `path` (a directory with its `Cargo.toml`;
    /// relative to the calling crate's manifest directory under cargo).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            targets: Vec::new(),
            variants: Vec::new(),
            features: Vec::new(),
            output_name: None,
            out_dir: None,
            target_dir: None,
            install_toolchain: false,
            cargo_directives: None,
            hot_rule: true,
        }
    }

    /// Builds for `target` (at least one target is required).
    pub fn target(mut self, target: Target) -> Self {
        if !self.targets.contains(&target) {
            self.targets.push(target);
        }
        self
    }

    /// Builds `variant` for every target (default: [`Variant::Release`] only).
    pub fn variant(mut self, variant: Variant) -> Self {
        if !self.variants.contains(&variant) {
            self.variants.push(variant);
        }
        self
    }

    /// Whether a hot kernel's spills or stack frame fail the release build
    /// (default `true`). Off for profiling builds only, whose
    /// instrumentation may spill where the production kernels do not
    /// (`BATON_TRACE=1`); the spills are still in the ptxas report.
    ///
    /// ```
    /// let k = baton_build::KernelCrate::new("kernels").hot_rule(false);
    /// # let _ = k;
    /// ```
    pub fn hot_rule(mut self, enforce: bool) -> Self {
        self.hot_rule = enforce;
        self
    }

    /// Enables the kernel crate's cargo feature `feature`.
    pub fn feature(mut self, feature: &str) -> Self {
        self.features.push(feature.to_string());
        self
    }

    /// Output files are `<name>_<target>[_debug].ptx` (default: the kernel
    /// crate's library name).
    pub fn output_name(mut self, name: &str) -> Self {
        self.output_name = Some(name.to_string());
        self
    }

    /// Writes the PTX to `dir` (default: `$OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The nested build's target directory (default: `baton-build` under the
    /// host's target directory, found from `OUT_DIR`; one subdirectory per
    /// target, shared by every kernel crate so `core` is built once).
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// When the toolchain is missing, run the bundled installer
    /// ([`toolchain::install_script`]; apt-get for rustc, pip for ptxas)
    /// before giving up. Off by default; `BATON_INSTALL_TOOLCHAIN=1` turns it
    /// on too.
    pub fn install_toolchain(mut self, yes: bool) -> Self {
        self.install_toolchain = yes;
        self
    }

    /// Print `cargo::rerun-if-*` and `cargo::warning` lines (default: when
    /// `OUT_DIR` is set, i.e. inside a build script).
    pub fn cargo_directives(mut self, yes: bool) -> Self {
        self.cargo_directives = Some(yes);
        self
    }

    /// [`KernelCrate::build`]; on error prints it as `cargo::error=` lines
    /// and exits with status 1.
    pub fn build_or_exit(self) -> Built {
        match self.build() {
            Ok(b) => b,
            Err(e) => fail(&e.to_string()),
        }
    }

    /// Builds every requested target × variant. See [`BuildError`] for the
    /// failures.
    pub fn build(self) -> Result<Built, BuildError> {
        let directives = self
            .cargo_directives
            .unwrap_or_else(|| env::var_os("OUT_DIR").is_some());
        if directives {
            for v in [
                "RUSTC_DEVICE",
                "CARGO_DEVICE",
                "PTXAS",
                "BATON_TOOLS_DIR",
                "BATON_INSTALL_TOOLCHAIN",
            ] {
                println!("cargo::rerun-if-env-changed={v}");
            }
        }
        if self.targets.is_empty() {
            return Err(BuildError::Config {
                what: "no target: call .target(Target::Sm90a) and/or .target(Target::Sm100a)"
                    .into(),
            });
        }
        let krate = self.crate_dir()?;
        let manifest = krate.join("Cargo.toml");
        let manifest_text = fs::read_to_string(&manifest).map_err(|source| BuildError::Io {
            doing: format!("reading {}", manifest.display()),
            source,
        })?;
        let lib_name = lib_name(&manifest_text).ok_or_else(|| BuildError::Config {
            what: format!("{}: no [package] or [lib] name", manifest.display()),
        })?;
        if directives {
            println!("cargo::rerun-if-changed={}", manifest.display());
            println!("cargo::rerun-if-changed={}", krate.join("src").display());
        }

        let install = self.install_toolchain
            || env::var_os("BATON_INSTALL_TOOLCHAIN").is_some_and(|v| v == "1");
        let toolchain = match Toolchain::find() {
            Ok(t) if t.ptxas.is_some() || !install => t,
            Err(_) if install => Toolchain::install_and_find()?,
            Ok(_) => Toolchain::install_and_find()?,
            Err(e) => {
                if directives {
                    // Installing a tool later reruns the build: a missing
                    // path is always out of date.
                    println!("cargo::rerun-if-changed=/usr/bin/rustc");
                }
                return Err(e);
            }
        };
        if directives {
            println!("cargo::rerun-if-changed={}", toolchain.rustc.display());
            match &toolchain.ptxas {
                Some(p) => println!("cargo::rerun-if-changed={}", p.display()),
                None => {
                    for p in toolchain::ptxas_candidates() {
                        println!("cargo::rerun-if-changed={}", p.display());
                    }
                    println!(
                        "cargo::warning=baton-build: ptxas not found: PTX built but not checked (run: {})",
                        toolchain::install_command()
                    );
                }
            }
        }

        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => PathBuf::from(env::var_os("OUT_DIR").ok_or_else(|| BuildError::Config {
                what: "OUT_DIR is not set (not in a build script): call .out_dir(DIR)".into(),
            })?),
        };
        fs::create_dir_all(&out_dir).map_err(|source| BuildError::Io {
            doing: format!("creating {}", out_dir.display()),
            source,
        })?;
        let target_dir = match &self.target_dir {
            Some(d) => d.clone(),
            None => target_dir_from_out_dir(&out_dir)
                .ok_or_else(|| BuildError::Config {
                    what: format!(
                        "cannot find the target directory above OUT_DIR={}: call .target_dir(DIR)",
                        out_dir.display()
                    ),
                })?
                .join("baton-build"),
        };
        let name = self.output_name.clone().unwrap_or_else(|| lib_name.clone());
        let variants = if self.variants.is_empty() {
            vec![Variant::Release]
        } else {
            self.variants.clone()
        };

        let mut modules = Vec::new();
        for &target in &self.targets {
            for &variant in &variants {
                let m = self.build_one(
                    &toolchain,
                    &krate,
                    &lib_name,
                    &target_dir.join(target.file_suffix()),
                    &out_dir,
                    &name,
                    target,
                    variant,
                    directives,
                )?;
                if directives {
                    for w in &m.warnings {
                        if !modules.iter().any(|p: &BuiltPtx| p.warnings.contains(w)) {
                            println!("cargo::warning=baton-build: {w}");
                        }
                    }
                }
                if directives && !m.entries_without_spec.is_empty() {
                    println!(
                        "cargo::warning=baton-build: {}: entries without a KernelSpec (no launch bounds): {}",
                        m.path.display(),
                        m.entries_without_spec.join(", ")
                    );
                }
                modules.push(m);
            }
        }
        Ok(Built { toolchain, modules })
    }

    fn crate_dir(&self) -> Result<PathBuf, BuildError> {
        let p = if self.path.is_absolute() {
            self.path.clone()
        } else {
            match env::var_os("CARGO_MANIFEST_DIR") {
                Some(m) => PathBuf::from(m).join(&self.path),
                None => self.path.clone(),
            }
        };
        if !p.join("Cargo.toml").is_file() {
            return Err(BuildError::Config {
                what: format!(
                    "{} has no Cargo.toml (the kernel crate's directory)",
                    p.display()
                ),
            });
        }
        p.canonicalize().map_err(|source| BuildError::Io {
            doing: format!("resolving {}", p.display()),
            source,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn build_one(
        &self,
        tc: &Toolchain,
        krate: &Path,
        lib_name: &str,
        target_dir: &Path,
        out_dir: &Path,
        name: &str,
        target: Target,
        variant: Variant,
        directives: bool,
    ) -> Result<BuiltPtx, BuildError> {
        let build = format!("{} {:?}", target.sm(), variant);
        let mut cmd = Command::new(&tc.cargo);
        for (k, _) in env::vars_os() {
            if let Some(k) = k.to_str()
                && toolchain::leaks_into_nested_cargo(k)
            {
                cmd.env_remove(k);
            }
        }
        cmd.current_dir(krate)
            .env("RUSTC", &tc.rustc)
            .env("RUSTC_BOOTSTRAP", "1")
            .args(nested_cargo_args(
                krate,
                target_dir,
                target,
                variant,
                &self.features,
            ));
        let out = cmd.output().map_err(|source| BuildError::Io {
            doing: format!("running {}", tc.cargo.display()),
            source,
        })?;
        if !out.status.success() {
            return Err(BuildError::Cargo {
                krate: krate.to_path_buf(),
                build,
                output: format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ),
            });
        }
        let warnings = compiler_warnings(&String::from_utf8_lossy(&out.stderr));
        let profile_dir = target_dir
            .join("nvptx64-nvidia-cuda")
            .join(variant.profile());
        let asm = profile_dir.join("deps").join(format!("{lib_name}.s"));
        if directives {
            let dep_info = profile_dir.join(format!("{lib_name}.d"));
            if let Ok(text) = fs::read_to_string(&dep_info) {
                for f in rerun_paths(&dep_info_sources(&text)) {
                    println!("cargo::rerun-if-changed={}", f.display());
                }
            }
        }
        let raw = fs::read_to_string(&asm).map_err(|source| BuildError::Io {
            doing: format!("reading the PTX rustc wrote ({})", asm.display()),
            source,
        })?;
        let rewritten = ptx::rewrite(&raw).map_err(|source| BuildError::Ptx {
            file: asm.clone(),
            source,
        })?;
        let stem = format!("{name}_{}{}", target.file_suffix(), variant.file_suffix());
        let path = out_dir.join(format!("{stem}.ptx"));
        write(&path, &rewritten.ptx)?;
        let report = out_dir.join(format!("{stem}.ptxas.txt"));
        let _ = fs::remove_file(&report);
        let mut resources = Vec::new();
        let mut ptxas_report = None;
        if let Some(ptxas) = &tc.ptxas {
            let cubin = profile_dir.join(format!("{stem}.cubin"));
            let o = Command::new(ptxas)
                .arg(format!("-arch={}", target.sm()))
                .arg("-v")
                .arg(&path)
                .arg("-o")
                .arg(&cubin)
                .output()
                .map_err(|source| BuildError::Io {
                    doing: format!("running {}", ptxas.display()),
                    source,
                })?;
            let log = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            write(&report, &log)?;
            if !o.status.success() {
                return Err(BuildError::PtxasRejected { file: path, log });
            }
            resources = ptxas_report::parse_entries(&log);
            // The debug variant's bounded waits print hang reports through
            // vprintf, which needs a stack frame: the rule is for release.
            let dirty = match variant {
                Variant::Release if self.hot_rule => {
                    hot_kernels_not_clean(&rewritten.specs, &resources)
                }
                Variant::Release => Vec::new(),
                Variant::Debug => Vec::new(),
            };
            if !dirty.is_empty() {
                return Err(BuildError::HotKernelSpills {
                    file: path,
                    kernels: dirty,
                });
            }
            ptxas_report = Some(report);
        }
        Ok(BuiltPtx {
            target,
            variant,
            path,
            ptxas_report,
            specs: rewritten.specs,
            entries_without_spec: rewritten.entries_without_spec,
            resources,
            warnings,
        })
    }
}

/// The warnings in rustc's human-readable output (`stderr` of a cargo
/// build), one line each: the message and, when rustc gives one, the
/// location of its first span. Cargo's own summary lines (`` warning:
/// `crate` (lib) generated N warnings ``) and rustc's note on the `ptx*`
/// target features baton-build passes on purpose are left out.
///
/// ```
/// let stderr = "warning: variable does not need to be mutable\n   --> roles/src/sm90/stream_k.rs:197:13\n    |\n197 |         let mut accs = accs;\n\nwarning: `baton-kernel-roles` (lib) generated 1 warning\n";
/// assert_eq!(
///     baton_build::compiler_warnings(stderr),
///     ["variable does not need to be mutable (roles/src/sm90/stream_k.rs:197:13)"]
/// );
/// assert!(baton_build::compiler_warnings("   Compiling core v0.0.0\n").is_empty());
/// ```
pub fn compiler_warnings(stderr: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut lines = stderr.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(message) = line.strip_prefix("warning: ") else {
            continue;
        };
        // Cargo's summaries, and rustc's note on the `ptx*` target
        // features that the nested build passes on purpose.
        if (message.starts_with('`') && message.contains(" generated "))
            || message.starts_with("unstable feature specified for `-Ctarget-feature`")
        {
            continue;
        }
        let location = lines
            .peek()
            .and_then(|next| next.trim_start().strip_prefix("--> "))
            .map(str::trim);
        warnings.push(match location {
            Some(at) => format!("{message} ({at})"),
            None => message.to_string(),
        });
    }
    warnings
}

fn write(path: &Path, text: &str) -> Result<(), BuildError> {
    // Write only on change, so that include_str! users do not rebuild.
    if fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    fs::write(path, text).map_err(|source| BuildError::Io {
        doing: format!("writing {}", path.display()),
        source,
    })
}

/// The arguments of the nested `cargo rustc` (after the program name).
///
/// ```
/// use baton_build::{Target, Variant};
/// let a = baton_build::nested_cargo_args("/k".as_ref(), "/t".as_ref(), Target::Sm100a, Variant::Debug, &["sm100".into()]);
/// assert!(a.windows(2).any(|w| w == ["--profile", "baton-debug"]));
/// assert!(a.contains(&"profile.baton-debug.debug-assertions=true".to_string()));
/// assert!(a.contains(&"target-cpu=sm_100a".to_string()) && a.contains(&"target-feature=+ptx87".to_string()));
/// assert!(a.windows(2).any(|w| w == ["--features", "sm100"]));
/// ```
pub fn nested_cargo_args(
    krate: &Path,
    target_dir: &Path,
    target: Target,
    variant: Variant,
    features: &[String],
) -> Vec<String> {
    let p = variant.profile();
    let mut a: Vec<String> = vec![
        "rustc".into(),
        "--quiet".into(),
        "--manifest-path".into(),
        krate.join("Cargo.toml").display().to_string(),
        "--lib".into(),
        "--crate-type".into(),
        "cdylib".into(),
        "--target".into(),
        "nvptx64-nvidia-cuda".into(),
        "-Zbuild-std=core".into(),
        "--target-dir".into(),
        target_dir.display().to_string(),
        "--profile".into(),
        p.into(),
    ];
    for setting in [
        "inherits=\"release\"".to_string(),
        "opt-level=3".into(),
        "lto=true".into(),
        "codegen-units=1".into(),
        "panic=\"abort\"".into(),
        "overflow-checks=false".into(),
        format!("debug-assertions={}", variant.debug_assertions()),
    ] {
        a.push("--config".into());
        a.push(format!("profile.{p}.{setting}"));
    }
    if !features.is_empty() {
        a.push("--features".into());
        a.push(features.join(","));
    }
    a.extend(
        [
            "--",
            "--emit=asm",
            "-C",
            &format!("target-cpu={}", target.sm()),
            "-C",
            &format!("target-feature=+{}", target.ptx_isa()),
            "-C",
            "linker=/bin/true",
        ]
        .map(String::from),
    );
    a
}

/// Ends a build script with `msg`: each line as a `cargo::error=` directive
/// (cargo shows them as the build's error) and on stderr, then exit status 1
/// — no panic backtrace in the way.
///
/// ```no_run
/// // build.rs
/// let dir = std::env::var("KERNELS").unwrap_or_else(|_| baton_build::fail("KERNELS is not set"));
/// ```
pub fn fail(msg: &str) -> ! {
    for line in msg.lines() {
        println!("cargo::error={line}");
    }
    eprintln!("error: {msg}");
    std::process::exit(1)
}

/// A line of generated Rust for a build script's `$OUT_DIR/*.rs`: `pub const
/// {konst}: Option<&str>` holding `include_str!` of `OUT_DIR/{file}` when
/// `out/{file}` exists, `None` otherwise (an optional module, such as the
/// sm_100a PTX when its build was skipped).
///
/// ```
/// let d = std::env::temp_dir();
/// let line = baton_build::embed_optional_str(&d, "surely-absent.ptx", "X_PTX");
/// assert_eq!(line, "pub const X_PTX: Option<&str> = None;\n");
/// ```
pub fn embed_optional_str(out: &Path, file: &str, konst: &str) -> String {
    if out.join(file).exists() {
        format!(
            "pub const {konst}: Option<&str> = Some(include_str!(concat!(env!(\"OUT_DIR\"), \"/{file}\")));\n"
        )
    } else {
        format!("pub const {konst}: Option<&str> = None;\n")
    }
}

/// The library name of a kernel crate's manifest: `[lib] name`, else the
/// package name with `-` as `_`.
///
/// ```
/// assert_eq!(baton_build::lib_name("[package]\nname = \"my-kernels\"\n").as_deref(), Some("my_kernels"));
/// assert_eq!(baton_build::lib_name("[package]\nname = \"a\"\n[lib]\nname = \"b\"\n").as_deref(), Some("b"));
/// // Comments after a header or a value are not part of the name.
/// assert_eq!(baton_build::lib_name("[package] # k\nname = \"k-1\"  # the kernels\n").as_deref(), Some("k_1"));
/// assert_eq!(baton_build::lib_name("[package]\nname = 'lit'\n").as_deref(), Some("lit"));
/// ```
pub fn lib_name(manifest: &str) -> Option<String> {
    let mut section = "";
    let (mut package, mut lib) = (None, None);
    for line in manifest.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix('[') {
            section = rest.split(']').next().unwrap_or("").trim();
            continue;
        }
        let Some((k, v)) = t.split_once('=') else {
            continue;
        };
        if k.trim() != "name" {
            continue;
        }
        // A TOML basic ("…") or literal ('…') string; whatever follows its
        // closing quote (a `# comment`) is not part of the value.
        let v = v.trim();
        let Some(quote) = v.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        let Some(v) = v[1..].split(quote).next().map(str::to_string) else {
            continue;
        };
        match section {
            "package" => package = Some(v),
            "lib" => lib = Some(v),
            _ => {}
        }
    }
    lib.or(package).map(|n| n.replace('-', "_"))
}

/// The host's target directory from a build script's `OUT_DIR`
/// (`<target>/<profile>/build/<pkg>-<hash>/out`, or with a `<triple>/` level).
///
/// ```
/// use std::path::Path;
/// let d = baton_build::target_dir_from_out_dir(Path::new("/r/target/debug/build/x-1/out"));
/// assert_eq!(d.as_deref(), Some(Path::new("/r/target")));
/// ```
pub fn target_dir_from_out_dir(out_dir: &Path) -> Option<PathBuf> {
    let build = out_dir.ancestors().nth(2)?;
    if build.file_name()? != "build" {
        return None;
    }
    Some(build.parent()?.parent()?.to_path_buf())
}

/// The source files a cargo dep-info file (`target: a b c`) lists; `\ ` is
/// an escaped space.
///
/// ```
/// let d = "/t/k.ptx: /k/src/lib.rs /b/src/a\\ b.rs\n";
/// let files = baton_build::dep_info_sources(d);
/// assert_eq!(files, [std::path::PathBuf::from("/k/src/lib.rs"), "/b/src/a b.rs".into()]);
/// ```
pub fn dep_info_sources(text: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((_, deps)) = line.split_once(": ") else {
            continue;
        };
        let mut cur = String::new();
        let mut chars = deps.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    cur.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !cur.is_empty() {
                        out.push(PathBuf::from(std::mem::take(&mut cur)));
                    }
                }
                _ => cur.push(c),
            }
        }
        if !cur.is_empty() {
            out.push(PathBuf::from(cur));
        }
    }
    out
}

/// What to watch for `sources`: each file, and the `Cargo.toml` of the
/// package it belongs to (nearest one above), deduplicated.
fn rerun_paths(sources: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for s in sources {
        if !out.contains(s) {
            out.push(s.clone());
        }
        if let Some(m) = s
            .ancestors()
            .skip(1)
            .map(|d| d.join("Cargo.toml"))
            .find(|m| m.is_file())
            && !out.contains(&m)
        {
            out.push(m);
        }
    }
    out
}

/// `entry: …` descriptions of the hot kernels ptxas reports with spills or
/// a stack frame.
fn hot_kernels_not_clean(specs: &[KernelRecord], resources: &[EntryResources]) -> Vec<String> {
    specs
        .iter()
        .filter(|s| s.hot)
        .filter_map(|s| resources.iter().find(|r| r.name == s.name))
        .filter(|r| !r.is_clean())
        .map(|r| {
            format!(
                "{}: {} bytes stack frame, {} bytes spill stores, {} bytes spill loads",
                r.name, r.stack_frame_bytes, r.spill_store_bytes, r.spill_load_bytes
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_rule_applies_to_hot_kernels_only() {
        let spec = |name: &str, hot| KernelRecord {
            name: name.into(),
            threads: 128,
            cluster: [1, 1, 1],
            min_blocks_per_sm: 1,
            dynamic_smem_bytes: 0,
            hot,
            param_bytes: 8,
        };
        let res = |name: &str, stack, spill| EntryResources {
            name: name.into(),
            registers: 32,
            stack_frame_bytes: stack,
            spill_store_bytes: spill,
            spill_load_bytes: spill,
        };
        let specs = [spec("a", true), spec("b", false), spec("c", true)];
        let r = [res("a", 8, 0), res("b", 16, 16), res("c", 0, 0)];
        let dirty = hot_kernels_not_clean(&specs, &r);
        assert_eq!(dirty.len(), 1);
        assert!(dirty[0].starts_with("a: 8 bytes stack frame"), "{dirty:?}");
        assert!(hot_kernels_not_clean(&specs, &[res("a", 0, 4)])[0].contains("4 bytes spill"));
    }

    #[test]
    fn target_dir_needs_the_build_level() {
        assert_eq!(
            target_dir_from_out_dir(Path::new(
                "/r/target/x86_64-unknown-linux-gnu/release/build/p-1/out"
            )),
            Some(PathBuf::from("/r/target/x86_64-unknown-linux-gnu"))
        );
        assert_eq!(target_dir_from_out_dir(Path::new("/tmp/out")), None);
    }

    #[test]
    fn release_and_debug_profiles_differ_only_in_debug_assertions() {
        let args = |v| nested_cargo_args(Path::new("/k"), Path::new("/t"), Target::Sm90a, v, &[]);
        let strip = |a: Vec<String>, p: &str| -> Vec<String> {
            a.into_iter().map(|s| s.replace(p, "P")).collect()
        };
        let r = strip(args(Variant::Release), "baton-release");
        let d = strip(args(Variant::Debug), "baton-debug");
        let diff: Vec<_> = r.iter().zip(&d).filter(|(a, b)| a != b).collect();
        assert_eq!(
            diff,
            [(
                &"profile.P.debug-assertions=false".to_string(),
                &"profile.P.debug-assertions=true".to_string()
            )]
        );
        assert!(r.contains(&"target-feature=+ptx80".to_string()));
        assert!(!r.contains(&"--features".to_string()));
    }
}

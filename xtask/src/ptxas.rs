//! Parsing `ptxas -v` output: registers, spills, stack frame and shared
//! memory per function, so tests and `baton info` can hold hot kernels to
//! "no spills, no stack".

use crate::tool_error::ToolError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Resources of one function as `ptxas -v` reports them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PtxasReport {
    /// Function name (mangled for device functions).
    pub kernel: String,
    /// True for kernels (`.entry`), false for device functions.
    pub entry: bool,
    /// Registers per thread (0 when ptxas printed no `Used` line).
    pub registers: u32,
    /// Bytes of spill stores.
    pub spill_stores: u32,
    /// Bytes of spill loads.
    pub spill_loads: u32,
    /// Bytes of stack frame.
    pub stack_frame: u32,
    /// Bytes of static shared memory.
    pub smem: u32,
    /// Named barriers used.
    pub barriers: u32,
}

impl PtxasReport {
    /// No spills and no stack frame: what a hot kernel must have.
    pub fn is_clean(&self) -> bool {
        self.spill_stores == 0 && self.spill_loads == 0 && self.stack_frame == 0
    }
}

/// Why `ptxas -v` output could not be parsed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("cannot parse ptxas -v output, line {line}: {text:?} ({what})")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// The line.
    pub text: String,
    /// What was expected.
    pub what: &'static str,
}

/// Parses the output of `ptxas -v` (stdout and stderr together).
///
/// ```
/// let out = "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n\
///            ptxas info    : Function properties for k\n\
///            \x20   8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n\
///            ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n";
/// let r = xtask::ptxas::parse(out).unwrap();
/// assert_eq!(r[0].kernel, "k");
/// assert_eq!((r[0].registers, r[0].spill_stores, r[0].stack_frame, r[0].smem), (40, 4, 8, 1024));
/// assert!(!r[0].is_clean());
/// ```
pub fn parse(text: &str) -> Result<Vec<PtxasReport>, ParseError> {
    let mut out: Vec<PtxasReport> = Vec::new();
    // Index in `out` of the function the next property/usage line is about.
    let mut current: Option<usize> = None;
    let find_or_add = |out: &mut Vec<PtxasReport>, name: &str, entry: bool| -> usize {
        if let Some(i) = out.iter().position(|r| r.kernel == name) {
            out[i].entry |= entry;
            i
        } else {
            out.push(PtxasReport {
                kernel: name.to_string(),
                entry,
                ..Default::default()
            });
            out.len() - 1
        }
    };
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let err = |what| ParseError {
            line: i + 1,
            text: raw.to_string(),
            what,
        };
        let body = line
            .strip_prefix("ptxas info")
            .map(|r| r.trim_start().trim_start_matches(':').trim());
        if let Some(body) = body {
            if let Some(rest) = body.strip_prefix("Compiling entry function") {
                let name = quoted(rest).ok_or_else(|| err("a quoted function name"))?;
                current = Some(find_or_add(&mut out, name, true));
            } else if let Some(rest) = body.strip_prefix("Function properties for") {
                let name = rest.trim();
                if name.is_empty() {
                    return Err(err("a function name"));
                }
                current = Some(find_or_add(&mut out, name, false));
            } else if let Some(rest) = body.strip_prefix("Used") {
                let idx = current.ok_or_else(|| err("a preceding function"))?;
                for part in rest.split(',') {
                    let part = part.trim().trim_start_matches("used").trim();
                    let mut it = part.split_whitespace();
                    let (Some(n), Some(unit)) = (it.next(), it.next()) else {
                        continue;
                    };
                    let Ok(n) = n.parse::<u32>() else { continue };
                    match (unit, it.next()) {
                        ("registers", _) => out[idx].registers = n,
                        ("barriers", _) => out[idx].barriers = n,
                        ("bytes", Some("smem")) => out[idx].smem = n,
                        _ => {}
                    }
                }
            }
        } else if line.contains("bytes stack frame") {
            let idx = current.ok_or_else(|| err("a preceding 'Function properties' line"))?;
            for part in line.split(',') {
                let mut it = part.split_whitespace();
                let n = it
                    .next()
                    .and_then(|n| n.parse::<u32>().ok())
                    .ok_or_else(|| err("'<n> bytes ...'"))?;
                let what: Vec<&str> = it.collect();
                match what.as_slice() {
                    ["bytes", "stack", "frame"] => out[idx].stack_frame = n,
                    ["bytes", "spill", "stores"] => out[idx].spill_stores = n,
                    ["bytes", "spill", "loads"] => out[idx].spill_loads = n,
                    _ => {}
                }
            }
        }
    }
    Ok(out)
}

/// The text between the quotes of `'name' ...`.
fn quoted(s: &str) -> Option<&str> {
    let s = s.trim_start().strip_prefix('\'')?;
    let end = s.find('\'')?;
    Some(&s[..end])
}

/// Where ptxas is: `$PTXAS`, else the project-local install from
/// `tools/install-device-toolchain.sh`, else `ptxas` on `PATH`.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS").map(PathBuf::from) {
        return p.exists().then_some(p);
    }
    let local =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/cuda-nvcc/nvidia/cu13/bin/ptxas");
    if local.exists() {
        return Some(local);
    }
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join("ptxas"))
        .find(|p| p.exists())
}

/// Runs `ptxas -arch=<arch> -v` on `ptx` and returns its combined output.
/// Errors: [`ToolError::Failed`] carries ptxas's own messages.
pub fn run(ptxas: &Path, ptx: &str, arch: &str) -> Result<String, ToolError> {
    let io = |action, path: &Path| {
        let path = path.to_path_buf();
        move |source| ToolError::Io {
            action,
            path,
            source,
        }
    };
    let dir = std::env::temp_dir().join(format!("baton-ptxas-{}-{}", std::process::id(), unique()));
    std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
    let input = dir.join("in.ptx");
    std::fs::write(&input, ptx).map_err(io("write", &input))?;
    let res = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-v")
        .arg(&input)
        .arg("-o")
        .arg(dir.join("out.cubin"))
        .output()
        .map_err(io("run", ptxas));
    let _ = std::fs::remove_dir_all(&dir);
    let res = res?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
    if res.status.success() {
        Ok(text)
    } else {
        Err(ToolError::Failed {
            tool: "ptxas",
            status: res.status,
            output: text,
        })
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Real output of ptxas 13.0 on baton's debug-variant PTX, plus a kernel
    // with spills and shared memory in the format nvcc-built kernels print.
    const SAMPLE: &str = "\
ptxas info    : 1079 bytes gmem
ptxas info    : Compiling entry function 'baton_smoke_mbarrier' for 'sm_90a'
ptxas info    : Function properties for baton_smoke_mbarrier
    72 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 24 registers, used 1 barriers, 72 bytes cumulative stack size
ptxas info    : Compile time = 13.995 ms
ptxas info    : Function properties for _RNvNtNtNtCsjLZMk47Yima_5baton4arch4sm905debug11report_hang
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'gemm' for 'sm_90a'
ptxas info    : Function properties for gemm
    16 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 168 registers, used 2 barriers, 1024 bytes smem, 400 bytes cmem[0]
ptxas info    : Compiling entry function 'plain' for 'sm_90a'
ptxas info    : Function properties for plain
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers
";

    #[test]
    fn parses_every_function() {
        let r = parse(SAMPLE).unwrap();
        assert_eq!(r.len(), 4, "{r:#?}");
        let smoke = &r[0];
        assert_eq!(
            smoke,
            &PtxasReport {
                kernel: "baton_smoke_mbarrier".into(),
                entry: true,
                registers: 24,
                spill_stores: 0,
                spill_loads: 0,
                stack_frame: 72,
                smem: 0,
                barriers: 1
            }
        );
        assert!(!smoke.is_clean());
        assert!(!r[1].entry);
        assert!(r[1].kernel.ends_with("report_hang"));
        let gemm = &r[2];
        assert_eq!(
            (
                gemm.registers,
                gemm.spill_stores,
                gemm.spill_loads,
                gemm.stack_frame,
                gemm.smem,
                gemm.barriers
            ),
            (168, 16, 12, 16, 1024, 2)
        );
        assert!(r[3].is_clean());
        assert_eq!(r[3].registers, 12);
    }

    #[test]
    fn property_line_without_function_is_an_error() {
        let e = parse("    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n")
            .unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.to_string().contains("Function properties"), "{e}");
    }

    #[test]
    fn unquoted_entry_is_an_error() {
        assert!(parse("ptxas info    : Compiling entry function k for 'sm_90a'\n").is_err());
    }

    #[test]
    fn empty_output_has_no_functions() {
        assert_eq!(parse("").unwrap(), vec![]);
    }
}

//! Reading generated code: the loops of a kernel in PTX or SASS and how many
//! instructions each iteration executes.
//!
//! Used to check the zero-cost claim (the pipeline API's steady-state loop
//! compiles to the same instructions as hand-written `mbarrier` code) in CI,
//! without a GPU: PTX comes from the device build, SASS from `ptxas` +
//! `nvdisasm`.
//!
//! A *loop* is a label followed, later in the same function, by a branch back
//! to it; its size is the number of instructions from the label to that
//! branch, inclusive. In SASS, `ptxas` moves the retry path of a
//! `try_wait` spin out of line, after the kernel's `EXIT`, and branches back
//! from there; such spans contain an `EXIT` and are not counted as loops.
//!
//! ```
//! use xtask::codegen::{Dialect, kernel_loops};
//! let ptx = r#"
//! .visible .entry k(
//! )
//! {
//!     mov.u32 %r1, 0;
//! $L__BB0_1:
//!     add.s32 %r1, %r1, 1;
//!     setp.lt.u32 %p1, %r1, 10;
//!     @%p1 bra $L__BB0_1;
//!     ret;
//! }
//! "#;
//! let loops = kernel_loops(ptx, "k", Dialect::Ptx).unwrap();
//! assert_eq!(loops.len(), 1);
//! assert_eq!(loops[0].instructions, 3);
//! ```

use crate::tool_error::ToolError;

/// Which text a kernel comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// PTX assembly as rustc/LLVM emit it.
    Ptx,
    /// SASS as `nvdisasm -c` prints it.
    Sass,
}

/// One loop of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopInfo {
    /// The label at the loop head.
    pub label: String,
    /// Instructions per iteration (label to back-edge, inclusive).
    pub instructions: usize,
    /// Whether another loop lies inside this one.
    pub has_inner_loop: bool,
}

/// The body of kernel `name`, or `None` if the text has no such kernel.
pub fn kernel_body<'t>(text: &'t str, name: &str, dialect: Dialect) -> Option<&'t str> {
    match dialect {
        Dialect::Ptx => {
            let start = text.find(&format!(".entry {name}("))?;
            let rest = &text[start..];
            let open = rest.find("\n{")?;
            // Functions end at a `}` alone at the start of a line.
            let end = rest[open..].find("\n}").map(|e| open + e)?;
            Some(&rest[open..end])
        }
        Dialect::Sass => {
            let header = format!("\n{name}:\n");
            let start = text.find(&header)? + header.len();
            let rest = &text[start..];
            let end = rest
                .find("\n\t.section")
                .or_else(|| rest.find("\n.section"))
                .unwrap_or(rest.len());
            Some(&rest[..end])
        }
    }
}

enum Item {
    Label(String),
    Instr { target: Option<String>, exit: bool },
}

fn ptx_items(body: &str) -> Vec<Item> {
    let mut items = Vec::new();
    for line in body.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        if line.is_empty() || line == "{" || line == "}" {
            continue;
        }
        // Inline-asm blocks put several statements (and scoped labels) on one
        // line: `{ .reg .pred p; L: op ...; @!p bra L; }`.
        let line = line.trim_start_matches('{').trim_end_matches('}');
        for stmt in line.split(';') {
            let mut stmt = stmt.trim();
            while let Some(colon) = stmt.find(':') {
                let (head, tail) = stmt.split_at(colon);
                let is_label = !head.is_empty()
                    && !head.contains(char::is_whitespace)
                    && !head.starts_with('.')
                    && !tail.starts_with("::");
                if !is_label {
                    break;
                }
                items.push(Item::Label(head.to_string()));
                stmt = tail[1..].trim();
            }
            if stmt.is_empty() || stmt.starts_with('.') {
                continue;
            }
            let words: Vec<&str> = stmt.split_whitespace().collect();
            let op_at = usize::from(words.first().is_some_and(|w| w.starts_with('@')));
            let target = match words.get(op_at) {
                Some(op) if *op == "bra" || op.starts_with("bra.") => {
                    words.get(op_at + 1).map(|t| t.to_string())
                }
                _ => None,
            };
            items.push(Item::Instr {
                target,
                exit: false,
            });
        }
    }
    items
}

fn sass_items(body: &str) -> Vec<Item> {
    let mut items = Vec::new();
    for line in body.lines() {
        let t = line.trim();
        if t.starts_with(".L_") && t.ends_with(':') {
            items.push(Item::Label(t.trim_end_matches(':').to_string()));
        } else if t.starts_with("/*") && t.contains("*/") && t.ends_with(';') {
            let target = t.find("BRA").and_then(|b| {
                let tail = &t[b..];
                let open = tail.find("`(")?;
                let close = tail[open..].find(')')?;
                Some(tail[open + 2..open + close].to_string())
            });
            let exit = t.contains(" EXIT") || t.contains(" RET");
            items.push(Item::Instr { target, exit });
        }
    }
    items
}

/// The loops of kernel `name` in `text`, in order of their heads.
/// `None` if the kernel is not in the text.
pub fn kernel_loops(text: &str, name: &str, dialect: Dialect) -> Option<Vec<LoopInfo>> {
    let body = kernel_body(text, name, dialect)?;
    let items = match dialect {
        Dialect::Ptx => ptx_items(body),
        Dialect::Sass => sass_items(body),
    };
    // Position (in instructions) of every label and of every back-edge.
    let mut label_pos = std::collections::HashMap::new();
    let mut spans: Vec<(String, usize, usize)> = Vec::new();
    let mut exits = Vec::new();
    let mut n = 0usize;
    for item in &items {
        match item {
            Item::Label(l) => {
                label_pos.insert(l.clone(), n);
            }
            Item::Instr { target, exit } => {
                if *exit {
                    exits.push(n);
                }
                if let Some(t) = target
                    && let Some(&start) = label_pos.get(t)
                {
                    spans.push((t.clone(), start, n));
                }
                n += 1;
            }
        }
    }
    // Out-of-line re-entries (see the module docs) are not loops.
    spans.retain(|(_, start, end)| !exits.iter().any(|e| e >= start && e <= end));
    spans.sort_by_key(|s| (s.1, std::cmp::Reverse(s.2)));
    let loops = spans
        .iter()
        .map(|(label, start, end)| LoopInfo {
            label: label.clone(),
            instructions: end - start + 1,
            has_inner_loop: spans
                .iter()
                .any(|(l, s, e)| l != label && s >= start && e <= end && (s, e) != (start, end)),
        })
        .collect();
    Some(loops)
}

/// `nvdisasm` (from `$NVDISASM`, or the project-local wheel under
/// `.tools/cuda-nvdisasm` that `tools/install-device-toolchain.sh` installs).
pub fn find_nvdisasm() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("NVDISASM").map(std::path::PathBuf::from) {
        return p.exists().then_some(p);
    }
    let local = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../.tools/cuda-nvdisasm/nvidia/cu13/bin/nvdisasm");
    local.exists().then_some(local)
}

/// The SASS of `ptx` for `arch` (e.g. `sm_90a`): assembled with ptxas and
/// disassembled with `nvdisasm -c`. `Err` says which tool is missing or what
/// it printed.
pub fn sass_of(ptx: &str, arch: &str) -> Result<String, ToolError> {
    let ptxas = crate::ptxas::find_ptxas().ok_or(ToolError::NotFound {
        tool: "ptxas",
        searched: "$PTXAS, .tools/cuda-nvcc, PATH",
    })?;
    let nvdisasm = find_nvdisasm().ok_or(ToolError::NotFound {
        tool: "nvdisasm",
        searched: "$NVDISASM, .tools/cuda-nvdisasm",
    })?;
    let io = |action, path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| ToolError::Io {
            action,
            path,
            source,
        }
    };
    let dir = std::env::temp_dir().join(format!(
        "baton-sass-{}-{:?}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
    let (ptx_path, cubin) = (dir.join("k.ptx"), dir.join("k.cubin"));
    let result = (|| {
        std::fs::write(&ptx_path, ptx).map_err(io("write", &ptx_path))?;
        let out = std::process::Command::new(&ptxas)
            .arg(format!("-arch={arch}"))
            .arg(&ptx_path)
            .arg("-o")
            .arg(&cubin)
            .output()
            .map_err(io("run", &ptxas))?;
        if !out.status.success() {
            return Err(ToolError::Failed {
                tool: "ptxas",
                status: out.status,
                output: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        let out = std::process::Command::new(&nvdisasm)
            .arg("-c")
            .arg(&cubin)
            .output()
            .map_err(io("run", &nvdisasm))?;
        if !out.status.success() {
            return Err(ToolError::Failed {
                tool: "nvdisasm",
                status: out.status,
                output: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_asm_spin_loops_are_inner_loops() {
        let ptx = ".visible .entry k(\n)\n{\n$L__BB0_2:\n\t{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%r1], %r2; @!p bra W; }\n\tmbarrier.arrive.shared::cta.b64 _, [%r3];\n\txor.b32 %r2, %r2, 1;\n\t@%p1 bra $L__BB0_2;\n\tret;\n}\n";
        let loops = kernel_loops(ptx, "k", Dialect::Ptx).unwrap();
        assert_eq!(loops.len(), 2, "{loops:?}");
        assert_eq!(
            (
                loops[0].label.as_str(),
                loops[0].instructions,
                loops[0].has_inner_loop
            ),
            ("$L__BB0_2", 5, true)
        );
        assert_eq!(
            (
                loops[1].label.as_str(),
                loops[1].instructions,
                loops[1].has_inner_loop
            ),
            ("W", 2, false)
        );
    }

    #[test]
    fn sass_loops_follow_bra_targets() {
        let sass = "\nk:\n.text.k:\n        /*0000*/                   MOV R1, c[0x0][0x28] ;\n.L_x_7:\n        /*0010*/                   IADD3 R2, R2, 0x1, RZ ;\n        /*0020*/                   ISETP.NE.AND P0, PT, R2, 0x10, PT ;\n        /*0030*/              @P0 BRA `(.L_x_7) ;\n        /*0040*/                   EXIT ;\n\t.section .nv.foo\n";
        let loops = kernel_loops(sass, "k", Dialect::Sass).unwrap();
        assert_eq!(loops.len(), 1);
        assert_eq!(loops[0].instructions, 3);
    }

    #[test]
    fn missing_kernel_is_none() {
        assert!(kernel_loops("", "nope", Dialect::Ptx).is_none());
    }
}

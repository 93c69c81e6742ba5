//! Rewriting rustc's PTX into the module the host loads (pure functions on
//! strings): the kernel specs `baton::kernel!` exports are read and removed,
//! the dynamic shared-memory symbol is declared at module scope and every
//! entry with a spec gets its launch bounds.

use crate::error::PtxError;

/// Prefix of the exported statics that carry a spec (`baton::kernel::SPEC_SYMBOL_PREFIX`).
pub const SPEC_SYMBOL_PREFIX: &str = "__baton_spec_";
/// `baton::kernel::SpecRecord::MAGIC`.
pub const SPEC_MAGIC: u32 = u32::from_le_bytes(*b"BATN");
/// `baton::kernel::SpecRecord::VERSION`.
pub const SPEC_VERSION: u32 = 1;
/// `baton::kernel::SpecRecord::BYTES`.
pub const SPEC_BYTES: usize = 40;
/// `baton::kernel::SpecRecord::FLAG_HOT`.
pub const SPEC_FLAG_HOT: u32 = 1;

/// Name of the array that stands for the launch's dynamic shared memory
/// (`baton::arch::ptx::DYNAMIC_SMEM_SYMBOL`).
pub const DYNAMIC_SMEM_SYMBOL: &str = "baton_dynamic_smem";
/// Its module-scope declaration: PTX forbids `.extern .shared` inside a
/// function, and 128-byte-swizzled TMA tiles need 1024-byte alignment.
pub const DYNAMIC_SMEM_DECL: &str = ".extern .shared .align 1024 .b8 baton_dynamic_smem[];";

/// One kernel's spec as read back from the PTX.
///
/// ```
/// let ptx = ".visible .global .align 4 .b8 __baton_spec_k[40] = {66, 65, 84, 78, 1, 0, 0, 0, 128, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 16, 0, 0, 1, 0, 0, 0, 32};";
/// let specs = baton_build::ptx::parse_specs(ptx).unwrap();
/// assert_eq!(specs[0].name, "k");
/// assert_eq!((specs[0].threads, specs[0].cluster, specs[0].dynamic_smem_bytes), (128, [2, 1, 1], 4096));
/// assert!(specs[0].hot);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelRecord {
    /// The entry's name.
    pub name: String,
    /// Threads per block (`.maxntid threads, 1, 1`).
    pub threads: u32,
    /// Blocks per cluster.
    pub cluster: [u32; 3],
    /// `.minnctapersm` (0: none).
    pub min_blocks_per_sm: u32,
    /// Dynamic shared memory per block, bytes.
    pub dynamic_smem_bytes: u32,
    /// Spills or a stack frame fail the build.
    pub hot: bool,
    /// `size_of` the parameter struct.
    pub param_bytes: u32,
}

/// The `name` and initializer bytes of a `.global .b8 __baton_spec_*[N] = {…}`
/// line (zero-filled to `N`: LLVM leaves trailing zeros out), or `None` for
/// any other line.
fn spec_line(line: &str) -> Option<Result<(String, Vec<u8>), PtxError>> {
    let t = line.trim();
    let at = t.find(SPEC_SYMBOL_PREFIX)?;
    if !t.contains(".global") {
        return None;
    }
    let bad = |what: &'static str| PtxError::BadSpecRecord {
        line: t.to_string(),
        what,
    };
    let rest = &t[at + SPEC_SYMBOL_PREFIX.len()..];
    let Some(open) = rest.find('[') else {
        return Some(Err(bad("no `[size]` after the symbol")));
    };
    let name = rest[..open].to_string();
    let Some(close) = rest[open..].find(']') else {
        return Some(Err(bad("no `]`")));
    };
    let Ok(size) = rest[open + 1..open + close].trim().parse::<usize>() else {
        return Some(Err(bad("the array size is not a number")));
    };
    if !t[..at].contains(".b8") {
        return Some(Err(bad("not a `.b8` array")));
    }
    let init = &rest[open + close + 1..];
    let (Some(lb), Some(rb)) = (init.find('{'), init.rfind('}')) else {
        return Some(Err(bad("no `{…}` initializer")));
    };
    let mut bytes = Vec::with_capacity(size);
    for item in init[lb + 1..rb].split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        match item.parse::<u8>() {
            Ok(b) => bytes.push(b),
            Err(_) => return Some(Err(bad("an initializer element is not a byte"))),
        }
    }
    if bytes.len() > size {
        return Some(Err(bad("more initializer bytes than the array holds")));
    }
    bytes.resize(size, 0);
    Some(Ok((name, bytes)))
}

fn decode(name: String, line: &str, bytes: &[u8]) -> Result<KernelRecord, PtxError> {
    let bad = |what: &'static str| PtxError::BadSpecRecord {
        line: line.trim().to_string(),
        what,
    };
    if bytes.len() != SPEC_BYTES {
        return Err(bad(
            "the record is not 40 bytes (baton and baton-build versions differ?)",
        ));
    }
    let w = |i: usize| u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
    if w(0) != SPEC_MAGIC {
        return Err(bad("wrong magic (not a baton::kernel::SpecRecord)"));
    }
    if w(1) != SPEC_VERSION {
        return Err(bad(
            "record version is not 1 (baton and baton-build versions differ)",
        ));
    }
    Ok(KernelRecord {
        name,
        threads: w(2),
        cluster: [w(3), w(4), w(5)],
        min_blocks_per_sm: w(6),
        dynamic_smem_bytes: w(7),
        hot: w(8) & SPEC_FLAG_HOT != 0,
        param_bytes: w(9),
    })
}

/// Every spec record in `ptx`, in PTX order.
///
/// Errors: [`PtxError::BadSpecRecord`] for a record that is not a 40-byte
/// `.b8` array with baton's magic and version.
pub fn parse_specs(ptx: &str) -> Result<Vec<KernelRecord>, PtxError> {
    let mut out = Vec::new();
    for line in ptx.lines() {
        if let Some(r) = spec_line(line) {
            let (name, bytes) = r?;
            out.push(decode(name, line, &bytes)?);
        }
    }
    Ok(out)
}

/// The names of the `.entry` functions in `ptx`, in order.
///
/// ```
/// let ptx = ".visible .entry a(\n)\n{\n}\n.visible .entry b()\n{\n}\n";
/// assert_eq!(baton_build::ptx::entry_names(ptx), ["a", "b"]);
/// ```
pub fn entry_names(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(entry_name)
        .map(str::to_string)
        .collect()
}

fn entry_name(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix(".visible .entry ")?;
    let end = rest.find('(').unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// Prefix of the comment line [`rewrite`] leaves in place of each spec
/// record, so that the loaded module still says what each entry was built
/// for (the host reads it: `baton_runtime::Kernels::kernel`).
pub const SPEC_COMMENT_PREFIX: &str = "// baton-spec: ";

/// The comment line that stands for `spec` in the rewritten PTX:
/// `// baton-spec: <entry> threads=T cluster=X,Y,Z min_blocks_per_sm=M
/// dynamic_smem_bytes=S hot=0|1 param_bytes=P`.
///
/// ```
/// let r = baton_build::KernelRecord { name: "k".into(), threads: 128, cluster: [2, 1, 1], min_blocks_per_sm: 1, dynamic_smem_bytes: 4096, hot: true, param_bytes: 24 };
/// assert_eq!(
///     baton_build::ptx::spec_comment(&r),
///     "// baton-spec: k threads=128 cluster=2,1,1 min_blocks_per_sm=1 dynamic_smem_bytes=4096 hot=1 param_bytes=24"
/// );
/// ```
pub fn spec_comment(spec: &KernelRecord) -> String {
    let [x, y, z] = spec.cluster;
    format!(
        "{SPEC_COMMENT_PREFIX}{} threads={} cluster={x},{y},{z} min_blocks_per_sm={} dynamic_smem_bytes={} hot={} param_bytes={}",
        spec.name,
        spec.threads,
        spec.min_blocks_per_sm,
        spec.dynamic_smem_bytes,
        spec.hot as u32,
        spec.param_bytes
    )
}

/// The result of [`rewrite`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewritten {
    /// The PTX to embed.
    pub ptx: String,
    /// The specs found (and removed from the PTX), in PTX order.
    pub specs: Vec<KernelRecord>,
    /// Entries without a spec (declared without `baton::kernel!`): no launch
    /// bounds were added to them.
    pub entries_without_spec: Vec<String>,
}

/// The parameter declaration `.param .align A .b8 name_param_0[N]` with
/// `A` raised to [`PARAM_ALIGN`] (kept when larger). rustc's nvptx ABI
/// aligns a by-value struct parameter to at most 16 bytes; with the one
/// parameter at 64 bytes, fields at multiples of 64 (tensor maps passed by
/// value, which TMA needs 64-byte aligned) are aligned in the parameter
/// space too. The parameter is alone, so its bytes do not move.
///
/// ```
/// use baton_build::ptx::param_aligned_to_64;
/// assert_eq!(param_aligned_to_64(".param .align 16 .b8 k_param_0[704]"), ".param .align 64 .b8 k_param_0[704]");
/// assert_eq!(param_aligned_to_64(".param .align 128 .b8 k_param_0[8]"), ".param .align 128 .b8 k_param_0[8]");
/// ```
pub fn param_aligned_to_64(param: &str) -> String {
    let rest = param.strip_prefix(".param .align ").unwrap_or(param);
    match rest.split_once(' ') {
        Some((align, tail)) if align.parse::<u32>().is_ok_and(|a| a < PARAM_ALIGN) => {
            format!(".param .align {PARAM_ALIGN} {tail}")
        }
        _ => param.to_string(),
    }
}

/// The least alignment of an entry's parameter struct in the PTX that
/// [`rewrite`] writes: a `CUtensorMap`'s (64 bytes).
pub const PARAM_ALIGN: u32 = 64;

/// Turns rustc's PTX into the module the host loads:
///
/// * replaces each `__baton_spec_*` record by its [`spec_comment`] line (and
///   drops the record's `// .globl` comment), returning what they said;
/// * declares [`DYNAMIC_SMEM_DECL`] after `.address_size 64` when the
///   module uses the symbol;
/// * writes `.maxntid threads, 1, 1` and `.minnctapersm n` (when n > 0)
///   between the parameter list and the body of every entry with a spec,
///   after checking that the entry takes exactly one parameter of the
///   spec's `param_bytes`, and aligns that parameter to [`PARAM_ALIGN`]
///   bytes ([`param_aligned_to_64`]).
///
/// ```
/// let ptx = "\
/// .version 8.0
/// .target sm_90a
/// .address_size 64
///
/// \t// .globl\tk
/// .visible .global .align 4 .b8 __baton_spec_k[40] = {66, 65, 84, 78, 1, 0, 0, 0, 128, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 16};
///
/// .visible .entry k(
/// \t.param .align 8 .b8 k_param_0[16]
/// )
/// {
/// \tmov.u32 %r1, baton_dynamic_smem;
/// }
/// ";
/// let out = baton_build::ptx::rewrite(ptx).unwrap();
/// assert!(!out.ptx.contains("__baton_spec_"));
/// assert!(out.ptx.contains("// baton-spec: k threads=128 cluster=1,1,1 min_blocks_per_sm=1 dynamic_smem_bytes=1024 hot=0 param_bytes=16\n"));
/// assert!(out.ptx.contains(".address_size 64\n.extern .shared .align 1024 .b8 baton_dynamic_smem[];\n"));
/// assert!(out.ptx.contains(")\n.maxntid 128, 1, 1\n.minnctapersm 1\n{"));
/// ```
///
/// Errors: [`PtxError`] naming the rule a record, an entry or the module
/// broke.
pub fn rewrite(ptx: &str) -> Result<Rewritten, PtxError> {
    let specs = parse_specs(ptx)?;
    for (i, s) in specs.iter().enumerate() {
        if specs[..i].iter().any(|o| o.name == s.name) {
            return Err(PtxError::DuplicateSpec {
                entry: s.name.clone(),
            });
        }
    }
    let entries = entry_names(ptx);
    for s in &specs {
        if !entries.contains(&s.name) {
            return Err(PtxError::SpecWithoutEntry {
                entry: s.name.clone(),
            });
        }
    }

    let record_names: Vec<String> = specs
        .iter()
        .map(|s| format!("{SPEC_SYMBOL_PREFIX}{}", s.name))
        .collect();
    let comments: Vec<String> = specs.iter().map(spec_comment).collect();
    let mut lines: Vec<&str> = Vec::new();
    for line in ptx.lines() {
        if let Some(r) = spec_line(line) {
            // Checked above; the record becomes its comment line.
            let name = r.map(|(n, _)| n).unwrap_or_default();
            if let Some(i) = specs.iter().position(|s| s.name == name) {
                lines.push(&comments[i]);
            }
            continue;
        }
        let t = line.trim();
        if let Some(sym) = t.strip_prefix("// .globl")
            && record_names.iter().any(|r| r == sym.trim())
        {
            continue;
        }
        lines.push(line);
    }

    let uses_smem = lines.iter().any(|l| l.contains(DYNAMIC_SMEM_SYMBOL));
    let mut out = String::with_capacity(ptx.len() + 64 * specs.len());
    let mut declared = false;
    let mut entries_without_spec = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        out.push_str(line);
        out.push('\n');
        i += 1;
        if uses_smem && !declared && line == ".address_size 64" {
            out.push_str(DYNAMIC_SMEM_DECL);
            out.push('\n');
            declared = true;
            continue;
        }
        let Some(name) = entry_name(line) else {
            continue;
        };
        let Some(spec) = specs.iter().find(|s| s.name == name) else {
            entries_without_spec.push(name.to_string());
            continue;
        };
        // The parameter list: `name(` then one line per parameter, then `)`.
        if !line.trim_end().ends_with('(') {
            return Err(PtxError::EntryParams {
                entry: name.to_string(),
                expected_bytes: spec.param_bytes,
                found: line.trim().to_string(),
            });
        }
        let mut params = Vec::new();
        while i < lines.len() && lines[i].trim() != ")" {
            params.push(lines[i].trim());
            i += 1;
        }
        if i == lines.len() {
            return Err(PtxError::Malformed {
                what: "an entry's parameter list has no closing `)` line",
            });
        }
        let expected = format!("_param_0[{}]", spec.param_bytes);
        let one_struct = params.len() == 1
            && params[0].starts_with(".param .align ")
            && params[0].contains(" .b8 ")
            && params[0].ends_with(&format!("{name}{expected}"));
        if !one_struct {
            return Err(PtxError::EntryParams {
                entry: name.to_string(),
                expected_bytes: spec.param_bytes,
                found: params.join(" "),
            });
        }
        out.push('\t');
        out.push_str(&param_aligned_to_64(params[0]));
        out.push('\n');
        out.push_str(lines[i]); // `)`
        out.push('\n');
        i += 1;
        out.push_str(&format!(".maxntid {}, 1, 1\n", spec.threads));
        if spec.min_blocks_per_sm > 0 {
            out.push_str(&format!(".minnctapersm {}\n", spec.min_blocks_per_sm));
        }
    }
    if uses_smem && !declared {
        return Err(PtxError::Malformed {
            what: "the module uses baton_dynamic_smem but has no `.address_size 64` line to declare it after",
        });
    }
    if !ptx.ends_with('\n') {
        out.pop();
    }
    Ok(Rewritten {
        ptx: out,
        specs,
        entries_without_spec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str, words: [u32; 10], trim_zeros: bool) -> String {
        let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        if trim_zeros {
            while bytes.last() == Some(&0) {
                bytes.pop();
            }
        }
        let list: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
        format!(
            ".visible .global .align 4 .b8 {SPEC_SYMBOL_PREFIX}{name}[40] = {{{}}};",
            list.join(", ")
        )
    }

    fn words(
        threads: u32,
        cluster: [u32; 3],
        minb: u32,
        smem: u32,
        hot: bool,
        pb: u32,
    ) -> [u32; 10] {
        [
            SPEC_MAGIC,
            SPEC_VERSION,
            threads,
            cluster[0],
            cluster[1],
            cluster[2],
            minb,
            smem,
            hot as u32,
            pb,
        ]
    }

    fn module(body: &str) -> String {
        format!(".version 8.0\n.target sm_90a\n.address_size 64\n\n{body}")
    }

    fn entry(name: &str, param: &str, body: &str) -> String {
        format!(".visible .entry {name}(\n\t{param}\n)\n{{\n{body}\n\tret;\n}}\n")
    }

    #[test]
    fn constants_match_baton_kernel() {
        use baton::kernel::SpecRecord;
        assert_eq!(SPEC_SYMBOL_PREFIX, baton::kernel::SPEC_SYMBOL_PREFIX);
        assert_eq!(SPEC_MAGIC, SpecRecord::MAGIC);
        assert_eq!(SPEC_VERSION, SpecRecord::VERSION);
        assert_eq!(SPEC_BYTES, SpecRecord::BYTES);
        assert_eq!(SPEC_FLAG_HOT, SpecRecord::FLAG_HOT);
        assert_eq!(DYNAMIC_SMEM_SYMBOL, "baton_dynamic_smem");
        // The field order the decoder assumes.
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct P {
            _a: [u8; 24],
        }
        // SAFETY: repr(C) bytes.
        unsafe impl baton::kernel::KernelParams for P {}
        let spec = baton::kernel::KernelSpec::<P>::new("k", 96)
            .with_cluster([2, 3, 1])
            .with_min_blocks_per_sm(3)
            .with_dynamic_smem_bytes(5000)
            .hot();
        let r = SpecRecord::of(&spec);
        // SAFETY: SpecRecord is repr(C) of u32s, no padding (size asserted).
        let bytes: [u8; SPEC_BYTES] = unsafe { core::mem::transmute(r) };
        let back = decode("k".into(), "", &bytes).unwrap();
        assert_eq!(
            back,
            KernelRecord {
                name: "k".into(),
                threads: 96,
                cluster: [2, 3, 1],
                min_blocks_per_sm: 3,
                dynamic_smem_bytes: 5000,
                hot: true,
                param_bytes: 24
            }
        );
    }

    #[test]
    fn records_decode_with_trailing_zeros_left_out() {
        for trim in [false, true] {
            let w = words(384, [2, 1, 1], 1, 209_920, true, 136);
            let specs = parse_specs(&record("gemm", w, trim)).unwrap();
            assert_eq!(
                specs,
                [KernelRecord {
                    name: "gemm".into(),
                    threads: 384,
                    cluster: [2, 1, 1],
                    min_blocks_per_sm: 1,
                    dynamic_smem_bytes: 209_920,
                    hot: true,
                    param_bytes: 136
                }]
            );
        }
    }

    #[test]
    fn random_records_round_trip() {
        // xorshift: fresh values each run of the loop, every field checked.
        let mut s = 0x9E37_79B9_7F4A_7C15u64 ^ std::process::id() as u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..200 {
            let r = KernelRecord {
                name: format!("k{}", next() % 1000),
                threads: (next() % 1024) as u32 + 1,
                cluster: [(next() % 4) as u32 + 1, (next() % 2) as u32 + 1, 1],
                min_blocks_per_sm: (next() % 4) as u32,
                dynamic_smem_bytes: (next() % 232_448) as u32,
                hot: next() % 2 == 0,
                param_bytes: (next() % 512) as u32 + 1,
            };
            let w = words(
                r.threads,
                r.cluster,
                r.min_blocks_per_sm,
                r.dynamic_smem_bytes,
                r.hot,
                r.param_bytes,
            );
            assert_eq!(parse_specs(&record(&r.name, w, true)).unwrap(), [r]);
        }
    }

    #[test]
    fn bad_records_are_rejected_with_the_rule() {
        let mut w = words(64, [1, 1, 1], 1, 0, false, 8);
        w[0] = 0x1234;
        let e = parse_specs(&record("k", w, false)).unwrap_err();
        assert!(
            matches!(e, PtxError::BadSpecRecord { what, .. } if what.contains("magic")),
            "{e}"
        );
        let mut w = words(64, [1, 1, 1], 1, 0, false, 8);
        w[1] = 2;
        let e = parse_specs(&record("k", w, false)).unwrap_err();
        assert!(e.to_string().contains("version"), "{e}");
        let short = ".visible .global .align 4 .b8 __baton_spec_k[36] = {66, 65, 84, 78};";
        assert!(
            parse_specs(short)
                .unwrap_err()
                .to_string()
                .contains("40 bytes")
        );
        let words32 = ".visible .global .align 4 .u32 __baton_spec_k[10] = {1, 2};";
        assert!(
            parse_specs(words32)
                .unwrap_err()
                .to_string()
                .contains(".b8")
        );
        let big = ".visible .global .align 4 .b8 __baton_spec_k[40] = {300};";
        assert!(parse_specs(big).unwrap_err().to_string().contains("byte"));
    }

    #[test]
    fn rewrite_adds_bounds_and_declaration_and_strips_records() {
        let ptx = module(&format!(
            "\t// .globl\t__baton_spec_a\n{}\n{}\n\n{}\n{}",
            record("a", words(384, [2, 1, 1], 1, 1024, true, 24), true),
            record("b", words(64, [1, 1, 1], 0, 0, false, 8), true),
            entry(
                "a",
                ".param .align 8 .b8 a_param_0[24]",
                "\tmov.u32 %r1, baton_dynamic_smem;"
            ),
            entry("b", ".param .align 8 .b8 b_param_0[8]", ""),
        ));
        let out = rewrite(&ptx).unwrap();
        assert_eq!(out.specs.len(), 2);
        assert!(out.entries_without_spec.is_empty());
        assert!(!out.ptx.contains("__baton_spec"), "{}", out.ptx);
        assert_eq!(out.ptx.matches(SPEC_COMMENT_PREFIX).count(), 2);
        assert!(out.ptx.contains("// baton-spec: a threads=384 cluster=2,1,1 min_blocks_per_sm=1 dynamic_smem_bytes=1024 hot=1 param_bytes=24\n"));
        assert!(out.ptx.starts_with(
            ".version 8.0\n.target sm_90a\n.address_size 64\n.extern .shared .align 1024 .b8 baton_dynamic_smem[];\n"
        ));
        assert!(
            out.ptx
                .contains("a_param_0[24]\n)\n.maxntid 384, 1, 1\n.minnctapersm 1\n{"),
            "{}",
            out.ptx
        );
        // min_blocks_per_sm 0: no .minnctapersm.
        assert!(
            out.ptx.contains("b_param_0[8]\n)\n.maxntid 64, 1, 1\n{"),
            "{}",
            out.ptx
        );
        assert_eq!(out.ptx.matches(".extern .shared").count(), 1);
    }

    #[test]
    fn rewrite_leaves_modules_without_specs_or_smem_alone() {
        let ptx = module(&entry("old", ".param .u64 old_param_0", ""));
        let out = rewrite(&ptx).unwrap();
        assert_eq!(out.ptx, ptx);
        assert_eq!(out.entries_without_spec, ["old"]);
    }

    #[test]
    fn param_size_mismatch_is_an_error() {
        let ptx = module(&format!(
            "{}\n{}",
            record("a", words(64, [1, 1, 1], 1, 0, false, 16), true),
            entry("a", ".param .align 8 .b8 a_param_0[24]", ""),
        ));
        let e = rewrite(&ptx).unwrap_err();
        assert!(
            matches!(
                e,
                PtxError::EntryParams {
                    expected_bytes: 16,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("a_param_0[24]"), "{e}");
    }

    #[test]
    fn scalar_parameters_are_not_a_struct() {
        let ptx = module(&format!(
            "{}\n.visible .entry a(\n\t.param .u64 a_param_0,\n\t.param .u32 a_param_1\n)\n{{\n}}\n",
            record("a", words(64, [1, 1, 1], 1, 0, false, 12), true),
        ));
        assert!(matches!(
            rewrite(&ptx).unwrap_err(),
            PtxError::EntryParams { .. }
        ));
    }

    #[test]
    fn a_spec_needs_its_entry_and_only_one_spec_per_entry() {
        let rec = record("gone", words(64, [1, 1, 1], 1, 0, false, 8), true);
        let e = rewrite(&module(&rec)).unwrap_err();
        assert!(matches!(e, PtxError::SpecWithoutEntry { .. }), "{e}");
        let ptx = module(&format!(
            "{rec}\n{rec}\n{}",
            entry("gone", ".param .align 8 .b8 gone_param_0[8]", "")
        ));
        assert!(matches!(
            rewrite(&ptx).unwrap_err(),
            PtxError::DuplicateSpec { .. }
        ));
    }

    #[test]
    fn smem_without_address_size_is_an_error() {
        let ptx = ".version 8.0\n.visible .entry a()\n{\nmov.u32 %r1, baton_dynamic_smem;\n}\n";
        assert!(matches!(
            rewrite(ptx).unwrap_err(),
            PtxError::Malformed { .. }
        ));
    }
}

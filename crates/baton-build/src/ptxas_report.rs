//! Reading `ptxas -v` output: spills and stack frame per entry, for the
//! hot-kernel rule.

/// What `ptxas -v` says about one entry function.
///
/// ```
/// let log = "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n\
///            ptxas info    : Function properties for k\n\
///            \x20   8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n\
///            ptxas info    : Used 40 registers, used 1 barriers\n";
/// let r = baton_build::ptxas_report::parse_entries(log);
/// assert_eq!(r[0].name, "k");
/// assert_eq!((r[0].registers, r[0].stack_frame_bytes, r[0].spill_store_bytes), (40, 8, 4));
/// assert!(!r[0].is_clean());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryResources {
    /// The entry's name.
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of stack frame.
    pub stack_frame_bytes: u32,
    /// Bytes of spill stores.
    pub spill_store_bytes: u32,
    /// Bytes of spill loads.
    pub spill_load_bytes: u32,
}

impl EntryResources {
    /// No spills and no stack frame: what a hot kernel must have.
    ///
    /// ```
    /// assert!(baton_build::ptxas_report::EntryResources::default().is_clean());
    /// ```
    pub fn is_clean(&self) -> bool {
        self.stack_frame_bytes == 0 && self.spill_store_bytes == 0 && self.spill_load_bytes == 0
    }
}

fn number_before(line: &str, unit: &str) -> Option<u32> {
    let at = line.find(unit)?;
    line[..at].split_whitespace().last()?.parse().ok()
}

/// The entries of a `ptxas -v` log, in order. Lines about device functions
/// (`Function properties for` a name that is not being compiled as an
/// entry) are skipped.
pub fn parse_entries(log: &str) -> Vec<EntryResources> {
    let mut out: Vec<EntryResources> = Vec::new();
    // Index of the entry the following lines describe, while they do.
    let mut current: Option<usize> = None;
    let mut properties_of_current = false;
    for line in log.lines() {
        let t = line.trim();
        if let Some(rest) = t
            .strip_prefix("ptxas info")
            .and_then(|r| r.split_once(':'))
            .map(|(_, r)| r.trim())
        {
            if let Some(n) = rest.strip_prefix("Compiling entry function '") {
                let name = n.split('\'').next().unwrap_or("").to_string();
                out.push(EntryResources {
                    name,
                    ..Default::default()
                });
                current = Some(out.len() - 1);
                properties_of_current = false;
            } else if let Some(n) = rest.strip_prefix("Function properties for ") {
                properties_of_current = current.is_some_and(|i| out[i].name == n.trim());
            } else if rest.starts_with("Used ")
                && let (Some(i), Some(r)) = (current, number_before(rest, " registers"))
            {
                out[i].registers = r;
            }
        } else if t.contains("bytes stack frame") && properties_of_current {
            if let Some(i) = current {
                let e = &mut out[i];
                e.stack_frame_bytes = number_before(t, "bytes stack frame").unwrap_or(0);
                e.spill_store_bytes = number_before(t, "bytes spill stores").unwrap_or(0);
                e.spill_load_bytes = number_before(t, "bytes spill loads").unwrap_or(0);
            }
            properties_of_current = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
ptxas info    : 393 bytes gmem
ptxas info    : Compiling entry function 'copy' for 'sm_90a'
ptxas info    : Function properties for copy
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 15 registers, used 2 barriers
ptxas info    : Compile time = 15.616 ms
ptxas info    : Function properties for _RNvNtCs_4core9panicking9panic_fmt
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'gemm' for 'sm_90a'
ptxas info    : Function properties for gemm
    24 bytes stack frame, 20 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem
";

    #[test]
    fn entries_and_their_resources() {
        let r = parse_entries(LOG);
        assert_eq!(
            r,
            [
                EntryResources {
                    name: "copy".into(),
                    registers: 15,
                    ..Default::default()
                },
                EntryResources {
                    name: "gemm".into(),
                    registers: 168,
                    stack_frame_bytes: 24,
                    spill_store_bytes: 20,
                    spill_load_bytes: 12
                }
            ]
        );
        // The device function's stack frame is not charged to `copy`.
        assert!(r[0].is_clean());
        assert!(!r[1].is_clean());
    }
}

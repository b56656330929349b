//! The comparison: two C probes built against the installed header, then every header item
//! checked against the Rust tables, every Rust item checked against the header.
//!
//! Pass 1 reads `LINUX_VERSION_CODE`, `IORING_OP_LAST` and `IORING_REGISTER_LAST`. Pass 2
//! prints the value of every macro and enum member the header defines, and the size,
//! alignment and field offsets/sizes/signedness of every struct it defines. Which names exist
//! comes from the header itself (`header.rs`), so pass 2 only ever names what is there; which
//! Rust items the header *must* have is keyed on the header's `LINUX_VERSION_CODE` and the
//! version that introduced each item (`rust_side.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::cc;
use super::header::{self, CField, Header};
use super::rust_side::{self, FieldEntry, RustField, Version};

/// The outcome of one kind of check: what was compared (for the log) and what failed.
#[derive(Debug, Default)]
pub(crate) struct Section {
    pub(crate) lines: Vec<String>,
    pub(crate) failures: Vec<String>,
}

impl Section {
    fn ok(&mut self, line: String) {
        self.lines.push(format!("ok        {line}"));
    }

    fn note(&mut self, kind: &str, line: String) {
        self.lines.push(format!("{kind:<9} {line}"));
    }

    fn fail(&mut self, line: String) {
        self.lines.push(format!("MISMATCH  {line}"));
        self.failures.push(line);
    }

    /// Prints the log and panics with every failure.
    pub(crate) fn assert_clean(&self, what: &str, header: &Header, version: Version) {
        for line in &self.lines {
            println!("{line}");
        }
        assert!(
            self.failures.is_empty(),
            "{} {what} of ringsteal_uring::abi disagree with {} (Linux {}.{} headers):\n  {}\n\
             Fix the Rust declaration in src/abi/, or, for a deliberate difference, the table \
             in tests/abi_check/rust_side.rs.",
            self.failures.len(),
            header.path.display(),
            version.0,
            version.1,
            self.failures.join("\n  ")
        );
        assert!(!self.lines.is_empty(), "the {what} check compared nothing");
    }
}

/// Everything the test reports, by kind.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) header: Header,
    pub(crate) version: Version,
    pub(crate) constants: Section,
    pub(crate) opcodes: Section,
    pub(crate) structs: Section,
    pub(crate) fields: Section,
    pub(crate) rust_coverage: Section,
}

/// One field as the C compiler sees it.
#[derive(Debug, Clone, Copy)]
struct CLayout {
    offset: usize,
    /// `None` for a flexible array member.
    size: Option<usize>,
    /// Element size for arrays, 0 otherwise.
    elem: usize,
    /// `None` for aggregates.
    signed: Option<bool>,
}

struct Probe {
    consts: BTreeMap<String, i128>,
    structs: BTreeMap<String, (usize, usize)>,
    fields: BTreeMap<(String, String), CLayout>,
}

pub(crate) fn run() -> Report {
    let header = header::read();
    let pass1 = cc::run(
        "abi_pass1",
        "#include <stdio.h>\n#include <linux/version.h>\n#include <linux/io_uring.h>\n\
         int main(void) {\n\
         \tprintf(\"%d %d %d\\n\", (int)LINUX_VERSION_CODE, (int)IORING_OP_LAST,\n\
         \t       (int)IORING_REGISTER_LAST);\n\
         \treturn 0;\n}\n",
    );
    let nums: Vec<u32> = pass1
        .split_whitespace()
        .map(|n| n.parse().expect("pass 1 prints numbers"))
        .collect();
    let (code, op_last, reg_last) = (nums[0], nums[1], nums[2]);
    let version = (code >> 16, (code >> 8) & 0xff);
    let probe = pass2(&header);
    let mut report = Report {
        version,
        ..Default::default()
    };
    check_constants(&header, &probe, version, &mut report.constants);
    check_opcodes(&header, &probe, op_last, reg_last, &mut report.opcodes);
    check_structs(&header, &probe, version, &mut report.structs);
    check_fields(&header, &probe, version, &mut report.fields);
    check_rust_coverage(&mut report.rust_coverage);
    report.header = header;
    report
}

fn member_expr(s: &str, f: &str) -> String {
    format!("(((struct {s} *)0)->{f})")
}

fn field_line(c: &mut String, s: &str, field: &CField) {
    let m = member_expr(s, &field.name);
    let elem_expr = format!("{m}[0]");
    let (size, elem, typed) = match (field.array, field.flex) {
        (_, true) => (
            "(long)-1".to_string(),
            format!("sizeof({elem_expr})"),
            elem_expr,
        ),
        (true, false) => (
            format!("(long)sizeof({m})"),
            format!("sizeof({elem_expr})"),
            elem_expr,
        ),
        (false, _) => (format!("(long)sizeof({m})"), "(size_t)0".to_string(), m),
    };
    let signed = if field.aggregate {
        "-1".to_string()
    } else {
        format!("SIGNED(__typeof__({typed}))")
    };
    writeln!(
        c,
        "\tprintf(\"F {s} {} %zu %ld %zu %d\\n\", offsetof(struct {s}, {}), {size}, {elem}, {signed});",
        field.name, field.name
    )
    .unwrap();
}

fn pass2(header: &Header) -> Probe {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <linux/version.h>\n\
         #include <linux/io_uring.h>\n\
         #define SIGNED(T) ((T)-1 < (T)0 ? 1 : 0)\n\
         #define K(name) printf(\"K %s %s%llu\\n\", #name, (name) < 0 ? \"-\" : \"\", \\\n\
         \t(name) < 0 ? 0ULL - (unsigned long long)(name) : (unsigned long long)(name))\n\
         int main(void) {\n",
    );
    for name in header.macros.iter().chain(&header.enum_members) {
        writeln!(c, "\tK({name});").unwrap();
    }
    let timespec = header::CStruct {
        name: "__kernel_timespec".into(),
        fields: ["tv_sec", "tv_nsec"]
            .iter()
            .map(|n| CField {
                name: n.to_string(),
                array: false,
                flex: false,
                aggregate: false,
            })
            .collect(),
    };
    for s in header.structs.iter().chain(std::iter::once(&timespec)) {
        writeln!(
            c,
            "\tprintf(\"S {0} %zu %zu\\n\", sizeof(struct {0}), _Alignof(struct {0}));",
            s.name
        )
        .unwrap();
        for field in &s.fields {
            field_line(&mut c, &s.name, field);
        }
    }
    c.push_str("\treturn 0;\n}\n");
    let out = cc::run("abi_pass2", &c);
    let mut probe = Probe {
        consts: BTreeMap::new(),
        structs: BTreeMap::new(),
        fields: BTreeMap::new(),
    };
    for line in out.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w[0] {
            "K" => {
                probe.consts.insert(w[1].into(), w[2].parse().unwrap());
            }
            "S" => {
                probe
                    .structs
                    .insert(w[1].into(), (w[2].parse().unwrap(), w[3].parse().unwrap()));
            }
            "F" => {
                let size: i64 = w[4].parse().unwrap();
                let signed: i32 = w[6].parse().unwrap();
                probe.fields.insert(
                    (w[1].into(), w[2].into()),
                    CLayout {
                        offset: w[3].parse().unwrap(),
                        size: usize::try_from(size).ok(),
                        elem: w[5].parse().unwrap(),
                        signed: (signed >= 0).then_some(signed == 1),
                    },
                );
            }
            other => panic!("unexpected line from the C probe: {other}"),
        }
    }
    probe
}

fn at_least(version: Version, since: Version) -> bool {
    version >= since
}

fn check_constants(header: &Header, probe: &Probe, version: Version, out: &mut Section) {
    let table = rust_side::consts();
    for name in header.macros.iter().chain(&header.enum_members) {
        let c = probe.consts[name];
        if rust_side::BOUNDS.contains(&name.as_str()) {
            out.note(
                "bound",
                format!("{name} = {c} (checked with the opcode tables)"),
            );
        } else if let Some(entry) = table.iter().find(|e| e.name == name) {
            let how = entry
                .derived
                .map_or(String::new(), |d| format!(" (Rust: {d})"));
            if entry.value == c {
                out.ok(format!("{name} = {c}{how}"));
            } else {
                out.fail(format!("{name}: header {c}, Rust {}{how}", entry.value));
            }
        } else if let Some((_, why)) = rust_side::OMITTED_CONSTS.iter().find(|(n, _)| n == name) {
            out.note("omitted", format!("{name} = {c}: {why}"));
        } else {
            out.fail(format!(
                "the header defines {name} = {c}, which ringsteal_uring::abi neither declares \
                 nor lists in OMITTED_CONSTS"
            ));
        }
    }
    for entry in &table {
        if header.defines(entry.name) {
            continue;
        }
        let (major, minor) = entry.since;
        if at_least(version, entry.since) {
            out.fail(format!(
                "{} is in Linux {major}.{minor} headers, so this header should define it",
                entry.name
            ));
        } else {
            out.note(
                "newer",
                format!(
                    "{} = {} (Linux {major}.{minor}): not in this header",
                    entry.name, entry.value
                ),
            );
        }
    }
}

fn check_opcodes(header: &Header, probe: &Probe, op_last: u32, reg_last: u32, out: &mut Section) {
    use ringsteal_uring::abi::{opcode_name, OPCODE_NAMES};
    let header_ops: Vec<&String> = header
        .enum_members
        .iter()
        .filter(|m| m.starts_with("IORING_OP_") && *m != "IORING_OP_LAST")
        .collect();
    if header_ops.len() as u32 == op_last {
        out.ok(format!(
            "IORING_OP_LAST = {op_last} = number of IORING_OP_* names in the header"
        ));
    } else {
        out.fail(format!(
            "IORING_OP_LAST = {op_last} but the header scan found {} opcodes",
            header_ops.len()
        ));
    }
    for (i, (op, name)) in OPCODE_NAMES.iter().enumerate() {
        let full = format!("IORING_OP_{name}");
        if usize::from(*op) != i || opcode_name(*op) != Some(name) {
            out.fail(format!(
                "OPCODE_NAMES[{i}] is ({op}, {name}): not in opcode order"
            ));
        }
        if u32::from(*op) < op_last {
            match probe.consts.get(&full) {
                Some(&v) if v == i128::from(*op) => {
                    out.ok(format!("{full} = {op} is below IORING_OP_LAST and in the header"))
                }
                Some(&v) => out.fail(format!("{full}: header {v}, OPCODE_NAMES {op}")),
                None => out.fail(format!(
                    "{full} = {op} is below IORING_OP_LAST = {op_last} but the header has no such name"
                )),
            }
        } else {
            out.note(
                "newer",
                format!("{full} = {op}: at or above IORING_OP_LAST = {op_last}"),
            );
        }
    }
    if (OPCODE_NAMES.len() as u32) < op_last {
        out.fail(format!(
            "the header has {op_last} opcodes, OPCODE_NAMES only {}",
            OPCODE_NAMES.len()
        ));
    }
    // Register opcodes: the kernel has left gaps (32 was reserved for zero-copy receive before
    // it had a name), so a value below IORING_REGISTER_LAST need not have a name yet; the
    // version rule in the constants check covers them. Here: every named one is below LAST.
    for name in header.enum_members.iter().filter(|m| {
        (m.starts_with("IORING_REGISTER_") || m.starts_with("IORING_UNREGISTER_"))
            && !matches!(
                m.as_str(),
                "IORING_REGISTER_LAST" | "IORING_REGISTER_USE_REGISTERED_RING"
            )
    }) {
        let v = probe.consts[name];
        if v < i128::from(reg_last) {
            out.ok(format!("{name} = {v} < IORING_REGISTER_LAST = {reg_last}"));
        } else {
            out.fail(format!(
                "{name} = {v} is not below IORING_REGISTER_LAST = {reg_last}"
            ));
        }
    }
}

fn check_structs(header: &Header, probe: &Probe, version: Version, out: &mut Section) {
    let table = rust_side::structs();
    let mut names: Vec<&str> = header.structs.iter().map(|s| s.name.as_str()).collect();
    names.push("__kernel_timespec");
    for name in &names {
        let (size, align) = probe.structs[*name];
        if let Some((_, why)) = rust_side::OMITTED_STRUCTS.iter().find(|(n, _)| n == name) {
            out.note("omitted", format!("struct {name} ({size} bytes): {why}"));
        } else if let Some(e) = table.iter().find(|e| e.c == *name) {
            if (e.size, e.align) == (size, align) {
                out.ok(format!(
                    "struct {name}: {size} bytes, align {align} ({})",
                    e.rust
                ));
            } else {
                out.fail(format!(
                    "struct {name}: header {size} bytes align {align}, {} {} bytes align {}",
                    e.rust, e.size, e.align
                ));
            }
        } else {
            out.fail(format!(
                "the header defines struct {name}, which ringsteal_uring::abi neither declares \
                 nor lists in OMITTED_STRUCTS"
            ));
        }
    }
    for e in &table {
        if !names.contains(&e.c) && at_least(version, e.since) {
            out.fail(format!("struct {} should be in this header", e.c));
        }
    }
}

fn entry_applies(e: &FieldEntry, version: Version) -> bool {
    e.until.map_or(true, |until| version < until)
}

fn compare_field(out: &mut Section, s: &str, f: &str, c: CLayout, r: &RustField) {
    let mut problems = Vec::new();
    if c.offset != r.offset {
        problems.push(format!("offset header {} Rust {}", c.offset, r.offset));
    }
    match c.size {
        Some(size) if size != r.size => {
            problems.push(format!("size header {size} Rust {}", r.size))
        }
        None if r.elem.is_none() => {
            problems.push("flexible array in C, not an array in Rust".into())
        }
        _ => {}
    }
    let r_signed = match r.elem {
        Some((elem, signed)) => {
            if c.elem != elem {
                problems.push(format!("element size header {} Rust {elem}", c.elem));
            }
            signed
        }
        None => {
            if c.elem != 0 {
                problems.push("array in C, not an array in Rust".into());
            }
            r.signed
        }
    };
    let mut notes = String::new();
    if let (Some(cs), Some(rs)) = (c.signed, r_signed) {
        if cs != rs {
            let sign = |b: bool| if b { "signed" } else { "unsigned" };
            let msg = format!("header {}, Rust {}", sign(cs), sign(rs));
            if let Some((.., why)) = rust_side::SIGNEDNESS_VARIES
                .iter()
                .find(|(vs, vf, _)| *vs == s && *vf == f)
            {
                notes = format!(" [signedness: {msg}; {why}]");
            } else {
                problems.push(msg);
            }
        }
    }
    let size = c
        .size
        .map_or("flexible".to_string(), |n| format!("{n} bytes"));
    if problems.is_empty() {
        out.ok(format!(
            "{s}.{f} at {} ({size}) = {}{notes}",
            c.offset, r.path
        ));
    } else {
        out.fail(format!("{s}.{f} vs {}: {}", r.path, problems.join(", ")));
    }
}

fn check_fields(header: &Header, probe: &Probe, version: Version, out: &mut Section) {
    let mut table = rust_side::fields();
    table.extend(rust_side::timespec_fields());
    let timespec = header::CStruct {
        name: "__kernel_timespec".into(),
        fields: ["tv_sec", "tv_nsec"]
            .iter()
            .map(|n| CField {
                name: n.to_string(),
                array: false,
                flex: false,
                aggregate: false,
            })
            .collect(),
    };
    for s in header.structs.iter().chain(std::iter::once(&timespec)) {
        if rust_side::OMITTED_STRUCTS.iter().any(|(n, _)| *n == s.name) {
            continue;
        }
        for field in &s.fields {
            let c = probe.fields[&(s.name.clone(), field.name.clone())];
            let entry = table.iter().find(|e| {
                e.c_struct == s.name && e.c_field == field.name && entry_applies(e, version)
            });
            match entry {
                Some(e) => compare_field(out, &s.name, &field.name, c, &e.rust),
                None => out.fail(format!(
                    "the header has {}.{} (offset {}), which the Rust field table does not map",
                    s.name, field.name, c.offset
                )),
            }
        }
        for e in table.iter().filter(|e| e.c_struct == s.name) {
            if s.fields.iter().any(|f| f.name == e.c_field) {
                continue;
            }
            let (major, minor) = e.since;
            if entry_applies(e, version) && at_least(version, e.since) {
                out.fail(format!(
                    "{}.{} is in Linux {major}.{minor} headers, so this header should have it",
                    e.c_struct, e.c_field
                ));
            } else if let Some((um, un)) = e.until {
                out.note(
                    "renamed",
                    format!(
                        "{}.{}: only in headers before Linux {um}.{un}",
                        e.c_struct, e.c_field
                    ),
                );
            } else {
                out.note(
                    "newer",
                    format!(
                        "{}.{} = {} (Linux {major}.{minor}): not in this header",
                        e.c_struct, e.c_field, e.rust.path
                    ),
                );
            }
        }
    }
}

/// Every public integer constant and every struct or union under `src/abi/` must be in the
/// tables above, so a new Rust declaration cannot escape the check.
fn check_rust_coverage(out: &mut Section) {
    let consts = rust_side::consts();
    let structs = rust_side::structs();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/abi");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("read src/abi")
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read an abi source file");
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("pub const ") {
                let (name, ty) = rest.split_once(':').expect("pub const NAME: TYPE");
                let ty = ty.split('=').next().unwrap().trim();
                if !matches!(ty, "u8" | "u16" | "u32" | "u64" | "i32" | "i64") {
                    continue;
                }
                if consts.iter().any(|c| c.name == name && c.derived.is_none()) {
                    out.ok(format!("{file}: {name} is in the constant table"));
                } else {
                    out.fail(format!(
                        "{file}: {name} is declared but not in the constant table of \
                         tests/abi_check/rust_side.rs, so nothing checks it"
                    ));
                }
            }
            let decl = line
                .strip_prefix("pub struct ")
                .or_else(|| line.strip_prefix("pub union "));
            if let Some(rest) = decl {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if structs.iter().any(|s| s.rust == name) {
                    out.ok(format!("{file}: struct {name} is in the struct table"));
                } else if rust_side::SQE_PARTS.contains(&name.as_str()) {
                    out.ok(format!(
                        "{file}: {name} is checked through io_uring_sqe's fields"
                    ));
                } else {
                    out.fail(format!(
                        "{file}: {name} is declared but not in the struct table of \
                         tests/abi_check/rust_side.rs, so nothing checks it"
                    ));
                }
            }
        }
    }
}

//! Prints what this kernel's io_uring supports: features, opcodes and accepted setup flags.
//!
//! ```text
//! cargo run -p ringsteal-uring --example probe
//! ```

use ringsteal_uring::abi::{FEATURE_NAMES, OPCODE_NAMES, SETUP_FLAG_NAMES};
use ringsteal_uring::Features;

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn main() {
    let features = match Features::detect() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("io_uring is not usable here: {e}");
            std::process::exit(1);
        }
    };
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    println!("io_uring on Linux {}", kernel.trim());
    println!();

    println!("{:<24} present", "feature (params.features)");
    println!("{:-<24} {:-<7}", "", "");
    for (bit, name) in FEATURE_NAMES {
        println!("{:<24} {}", name, yes(features.has_feature(*bit)));
    }
    println!();

    println!("{:<24} accepted", "setup flag");
    println!("{:-<24} {:-<8}", "", "");
    for (bit, name) in SETUP_FLAG_NAMES {
        let answer = if features.setup_flag_tried(*bit) {
            yes(features.setup_flag_accepted(*bit))
        } else {
            "not tried (needs caller-provided ring memory)"
        };
        println!("{:<24} {}", name, answer);
    }
    println!();

    let probe = features.probe();
    println!("{:<4} {:<20} supported", "op", "opcode");
    println!("{:-<4} {:-<20} {:-<9}", "", "", "");
    for (op, name) in OPCODE_NAMES {
        println!("{:<4} {:<20} {}", op, name, yes(probe.is_supported(*op)));
    }
    for op in (OPCODE_NAMES.len() as u8)..=probe.last_op() {
        if probe.is_supported(op) {
            println!("{:<4} {:<20} yes", op, "(newer than this binding)");
        }
    }
    println!();

    println!("{:<24} works", "capability (tried)");
    println!("{:-<24} {:-<5}", "", "");
    let rows = [
        ("MSG_RING", features.msg_ring()),
        ("SEND_MSG_RING (no ring)", features.send_msg_ring()),
        ("multishot accept", features.multishot_accept()),
        ("multishot recv", features.multishot_recv()),
        ("PBUF_RING", features.pbuf_ring()),
        ("SINGLE_ISSUER+DEFER", features.defer_taskrun()),
        ("COOP_TASKRUN+FLAG", features.coop_taskrun()),
        ("CQE_SKIP_SUCCESS", features.cqe_skip()),
        ("EXT_ARG wait timeout", features.ext_arg()),
    ];
    for (name, ok) in rows {
        println!("{:<24} {}", name, yes(ok));
    }
}

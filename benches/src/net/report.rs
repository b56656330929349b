//! What the http groups record beside criterion's times: per benchmark, every wrk run's
//! requests, duration, server CPU and wrk CPU, printed as medians and written to
//! `$CRITERION_HOME/net-http/<id with / as __>.json`, where `scripts/bench_results.py` reads
//! them for the report's http table and the CPU guardrails.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::wrk::Run;

/// The file the runs of benchmark `id` are written to, if `CRITERION_HOME` is set.
pub fn path(id: &str) -> Option<PathBuf> {
    path_in("net-http", id)
}

/// `$CRITERION_HOME/<dir>/<id with / as __>.json`, if `CRITERION_HOME` is set.
pub fn path_in(dir: &str, id: &str) -> Option<PathBuf> {
    let home = std::env::var_os("CRITERION_HOME")?;
    Some(
        PathBuf::from(home)
            .join(dir)
            .join(format!("{}.json", id.replace('/', "__"))),
    )
}

/// Writes `json` to `path`, creating its directory; a failure is printed, not fatal (the
/// report then finds the record missing and fails closed).
pub fn write_json(id: &str, path: &Path, json: &str) {
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, json));
    if let Err(e) = written {
        eprintln!("{id}: cannot write {}: {e}", path.display());
    }
}

/// Prints the medians of `runs` of benchmark `id` and writes them all to [`path`] (unless
/// `write` is false, as in criterion's `--test` pass).
pub fn record(id: &str, requests_per_iteration: u64, runs: &[Run], write: bool) {
    if runs.is_empty() {
        return;
    }
    let rate = median(runs.iter().map(Run::rate).collect());
    let per_req = |d: Duration, r: &Run| d.as_secs_f64() * 1e9 / r.requests.max(1) as f64;
    let server = median(runs.iter().map(|r| per_req(r.server_cpu, r)).collect());
    let client = median(runs.iter().map(|r| per_req(r.client_cpu, r)).collect());
    eprintln!(
        "{id}: {:.1} k requests/s, server CPU {:.2} µs/request, wrk CPU {:.2} µs/request \
         (medians of {} wrk runs)",
        rate / 1e3,
        server / 1e3,
        client / 1e3,
        runs.len()
    );
    let Some(path) = path(id).filter(|_| write) else {
        return;
    };
    let rows: Vec<String> = runs
        .iter()
        .map(|r| {
            format!(
                "{{\"requests\": {}, \"duration_ns\": {}, \"server_cpu_ns\": {}, \"client_cpu_ns\": {}}}",
                r.requests,
                r.duration.as_nanos(),
                r.server_cpu.as_nanos(),
                r.client_cpu.as_nanos()
            )
        })
        .collect();
    let json = format!(
        "{{\"id\": \"{id}\", \"requests_per_iteration\": {requests_per_iteration}, \"runs\": [\n  {}\n]}}\n",
        rows.join(",\n  ")
    );
    write_json(id, &path, &json);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

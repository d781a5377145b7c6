//! The `host` binary's command line: a bad flag or value is a usage message and exit code
//! 2, a bad problem size is a typed error and exit code 1, never a panic. Runs the built
//! binary with `--simulate` (or with flags rejected before any device is touched), so no
//! GPU is needed. The usage on the command-line page (`docs/cli.md`) names the flags
//! `--help` lists.

use std::process::{Command, Output};

fn host(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernels-gpu-host"))
        .args(args)
        .output()
        .expect("the host binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A successful run's JSON lines, each checked to be within its error bound (`"ok": true`).
fn ok_json_rows(args: &[&str]) -> Vec<serde_json::Value> {
    let out = host(args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    let rows: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    for row in &rows {
        assert_eq!(row["ok"], serde_json::Value::Bool(true), "{row}");
    }
    rows
}

/// A usage error: exit code 2, clap's message pointing to the usage, no panic or backtrace.
fn assert_usage_error(args: &[&str], needles: &[&str]) {
    let out = host(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    // clap prints the usage line for unknown flags, and a pointer to it for bad values.
    assert!(
        err.contains("Usage:") || err.contains("try '--help'"),
        "{args:?}: no usage in: {err}"
    );
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(!err.contains("stack backtrace"), "{args:?}: {err}");
    for needle in needles {
        assert!(
            err.contains(needle),
            "{args:?}: `{needle}` missing from: {err}"
        );
    }
    assert!(
        out.stdout.is_empty(),
        "{args:?}: printed results on a usage error"
    );
}

#[test]
fn unsupported_tile_width_lists_the_allowed_ones() {
    assert_usage_error(&["--tw", "12"], &["12", "8, 16, 32"]);
}

#[test]
fn unknown_kernel_is_a_usage_error() {
    assert_usage_error(&["--kernel", "nope"], &["nope", "naive", "tiled-static"]);
}

#[test]
fn zero_iterations_is_a_usage_error() {
    assert_usage_error(&["--iters", "0"], &["--iters"]);
}

#[test]
fn non_numeric_size_is_a_usage_error() {
    assert_usage_error(&["--m", "abc"], &["abc", "--m"]);
}

#[test]
fn unknown_flag_is_a_usage_error() {
    assert_usage_error(&["--bogus"], &["--bogus", "Usage:"]);
}

#[test]
fn shape_overflow_is_a_typed_error_naming_the_sizes() {
    let out = host(&[
        "--m",
        "100000",
        "--k",
        "100000",
        "--n",
        "100000",
        "--simulate",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("error:"), "{err}");
    assert!(err.contains("100000×100000"), "sizes missing from: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn small_simulated_run_prints_one_ok_json_line_per_kernel_and_tile_width() {
    let args = ["--simulate", "--m", "5", "--k", "7", "--n", "3", "--json"];
    // Below the threshold of the default kernel set: nothing is left out, nor said to be.
    let err = stderr(&host(&args));
    assert!(!err.contains("leaving out"), "{err}");
    let rows = ok_json_rows(&args);
    // naive once, three tiled kernels at three tile widths, and each FP32 SGEMM kernel once
    // (TF32 is opt-in: `--precision tf32`).
    let fp32 = kernels_gpu_host::SgemmKernel::ALL
        .iter()
        .filter(|k| k.precision() == kernels_gpu_host::Precision::Fp32)
        .count();
    assert_eq!(rows.len(), 10 + fp32, "{rows:?}");
    for row in &rows {
        assert_eq!(
            (&row["m"], &row["k"], &row["n"]),
            (&5.into(), &7.into(), &3.into())
        );
        // The simulator times nothing: no median, and no runs it is of.
        assert!(row["runs"].is_null() && row["ms_median"].is_null(), "{row}");
    }
}

#[test]
fn time_budget_takes_seconds_or_inf() {
    for budget in ["0.5", "0", "inf"] {
        let rows = ok_json_rows(
            &[
                &SMALL[..],
                &["--kernel", "naive", "--json"],
                &["--time-budget", budget],
            ]
            .concat(),
        );
        assert_eq!(rows.len(), 1, "{budget}: {rows:?}");
    }
    // The table has a runs column (`-` in the simulator, which times nothing).
    let out = host(&[&SMALL[..], &["--kernel", "naive"]].concat());
    let table = String::from_utf8(out.stdout).expect("UTF-8 output");
    let header: Vec<&str> = table
        .lines()
        .next()
        .expect("a header")
        .split_whitespace()
        .collect();
    let ms = header
        .iter()
        .position(|&c| c == "ms")
        .expect("an ms column");
    assert_eq!(header[ms + 1], "runs", "{table}");
}

#[test]
fn invalid_time_budget_is_a_usage_error_naming_the_value() {
    for bad in ["-1", "fast", "NaN", "1s"] {
        assert_usage_error(
            &["--time-budget", bad],
            &[bad, "--time-budget", "inf for no bound"],
        );
    }
    // The suite always makes all its runs: a budget for it is refused, not ignored.
    assert_usage_error(&["--suite", "--time-budget", "1"], &["--time-budget"]);
}

/// The fusion lesson in the simulator on 9×21×5, as JSON rows.
const FUSION_9X21X5: [&str; 10] = [
    "--simulate",
    "--op",
    "fusion",
    "--m",
    "9",
    "--k",
    "21",
    "--n",
    "5",
    "--json",
];

#[test]
fn fusion_lesson_in_the_simulator_prints_the_unfused_pair_and_the_fused_kernels() {
    let rows = ok_json_rows(&FUSION_9X21X5);
    assert_eq!(rows.len(), 3, "{rows:?}");
    // The unfused pair writes the 9·5·21-float intermediate; the fused kernels none.
    let mib = |r: &serde_json::Value| r["intermediate_mib"].as_f64().unwrap();
    assert_eq!(mib(&rows[0]), (4 * 9 * 5 * 21) as f64 / (1 << 20) as f64);
    assert!(rows[1..].iter().all(|r| mib(r) == 0.0), "{rows:?}");
}

/// `--precision tf32` and `--precision bf16` run the tensor-core configurations of that
/// precision and its autotuned choice, each within its own bound (`ok_json_rows`).
#[test]
fn precision_tf32_and_bf16_run_the_tensor_core_rung_within_their_bounds() {
    for (flag, precision) in [
        ("tf32", kernels_gpu_host::Precision::Tf32),
        ("bf16", kernels_gpu_host::Precision::Bf16),
    ] {
        let rows = ok_json_rows(&[
            "--simulate",
            "--precision",
            flag,
            "--m",
            "9",
            "--k",
            "12",
            "--n",
            "33",
            "--json",
        ]);
        let names: Vec<String> = rows
            .iter()
            .map(|row| row["kernel"].as_str().expect("name").to_owned())
            .collect();
        let count = kernels_gpu_host::SgemmKernel::ALL
            .iter()
            .filter(|k| k.precision() == precision)
            .count();
        assert_eq!(names.len(), count, "{names:?}");
        assert!(names.iter().all(|n| n.contains(flag)), "{names:?}");
        assert!(
            names
                .iter()
                .any(|n| *n == format!("sgemm-autotuned-{flag}")),
            "{names:?}"
        );
    }
}

/// A run's JSON lines, whatever their `ok`; the run must succeed.
fn json_rows(args: &[&str]) -> (Vec<serde_json::Value>, String) {
    let out = host(args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8(out.stdout.clone()).expect("UTF-8 output");
    let rows = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (rows, stderr(&out))
}

const SMALL: [&str; 7] = ["--simulate", "--m", "5", "--k", "7", "--n", "3"];

#[test]
fn simulated_runs_are_checked_in_full_by_default() {
    let rows = ok_json_rows(&[&SMALL[..], &["--kernel", "naive", "--json"]].concat());
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["check"], "full", "{rows:?}");
    assert!(rows[0]["max_abs_err"].is_f64(), "{rows:?}");
}

#[test]
fn check_none_reports_unchecked_and_never_ok() {
    let (rows, err) = json_rows(
        &[
            &SMALL[..],
            &["--kernel", "lecture", "--check", "none", "--json"],
        ]
        .concat(),
    );
    assert!(err.contains("not checked"), "{err}");
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!(row["check"], "none", "{row}");
        assert!(row["ok"].is_null(), "an unchecked result claims ok: {row}");
        assert!(row["max_abs_err"].is_null(), "{row}");
    }
    // The table says so in its ok column, and never `yes`.
    let out = host(&[&SMALL[..], &["--kernel", "lecture", "--check", "none"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = String::from_utf8(out.stdout).expect("UTF-8 output");
    let results: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(results.len(), rows.len(), "{table}");
    for line in results {
        assert!(line.trim_end().ends_with("none unchecked"), "{table}");
        assert!(!line.contains("yes"), "{table}");
    }
}

#[test]
fn check_sample_reports_a_checked_result() {
    let (rows, err) = json_rows(&[
        "--simulate",
        "--m",
        "33",
        "--k",
        "21",
        "--n",
        "17",
        "--kernel",
        "tiled-static",
        "--tw",
        "16",
        "--check",
        "sample",
        "--json",
    ]);
    assert!(err.contains("checking 64 outputs"), "{err}");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["check"], "sample", "{rows:?}");
    assert_eq!(rows[0]["ok"], true, "{rows:?}");
    assert!(
        rows[0]["max_abs_err"].as_f64().is_some_and(|e| e < 1e-4),
        "{rows:?}"
    );
}

#[test]
fn invalid_check_is_a_usage_error_listing_the_modes() {
    assert_usage_error(&["--check", "some"], &["some", "full", "sample", "none"]);
    // The suite always spot-checks: asking it for another check is refused, not ignored.
    assert_usage_error(&["--suite", "--check", "full"], &["--check"]);
}

#[test]
fn check_applies_to_the_fusion_lesson_and_the_vector_operations() {
    let fusion = FUSION_9X21X5;
    let rows = ok_json_rows(&[&fusion[..], &["--check", "sample"]].concat());
    assert!(rows.iter().all(|r| r["check"] == "sample"), "{rows:?}");
    let (rows, _) = json_rows(&[&fusion[..], &["--check", "none"]].concat());
    assert!(
        rows.iter()
            .all(|r| r["check"] == "none" && r["ok"].is_null()),
        "{rows:?}"
    );
    for op in ["sum", "sliding", "reduce"] {
        let args = [
            "--simulate",
            "--op",
            op,
            "--len",
            "1000",
            "--rows",
            "9",
            "--cols",
            "7",
            "--json",
        ];
        let (rows, _) = json_rows(&[&args[..], &["--check", "none"]].concat());
        assert!(!rows.is_empty());
        assert!(
            rows.iter()
                .all(|r| r["check"] == "none" && r["ok"].is_null()),
            "{op}: {rows:?}"
        );
        // An O(n) reference is checked in full even when a sample is asked for, and says so.
        let out = host(&[&args[..], &["--check", "sample"]].concat());
        assert!(
            stderr(&out).contains("every output is checked"),
            "{}",
            stderr(&out)
        );
        let rows = ok_json_rows(&[&args[..], &["--check", "sample"]].concat());
        assert!(rows.iter().all(|r| r["check"] == "full"), "{op}: {rows:?}");
    }
}

/// The long flags in `text` (`--name`), without `--help` and `--version`, which clap adds.
fn long_flags(text: &str) -> std::collections::BTreeSet<String> {
    let flag = regex::Regex::new(r"--([a-z][a-z0-9-]*)").expect("a valid pattern");
    flag.captures_iter(text)
        .map(|c| c[1].to_owned())
        .filter(|f| f != "help" && f != "version")
        .collect()
}

/// The command-line page (`docs/cli.md`) opens with the usage: every flag the binary takes
/// is there, and every flag there is one the binary takes.
#[test]
fn cli_page_usage_names_every_flag_of_help_and_no_other() {
    let page = include_str!("../docs/cli.md");
    let usage = page
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/cli.md starts with a usage block");
    let out = host(&["--help"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    let usage = usage.replace("cargo run --release --", "");
    let (documented, taken) = (long_flags(&usage), long_flags(&help));
    assert!(taken.len() >= 20, "only {taken:?} in --help:\n{help}");
    assert_eq!(
        documented, taken,
        "docs/cli.md's usage block against --help:\n{help}"
    );
}

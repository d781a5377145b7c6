#![allow(dead_code)] // each bench uses part of it; tests/bench_report runs its tests
//! The matmul bench's at-a-glance summary: GFLOP/s of every kernel and tile width per shape,
//! as a percentage of cuBLAS, written as a markdown table and an SVG bar chart.
//!
//! The bench (`benches/matmul.rs`) measures; this module only formats, so it runs and is
//! tested without a GPU.

use kernels_gpu_host::Precision;
use kernels_gpu_host::gpu::CublasMath;
use kernels_gpu_host::plan::bf16::BF16_CONFIGS;
use kernels_gpu_host::plan::kernels::MatmulKernel;
use kernels_gpu_host::plan::packed::PACKED_CONFIGS;
use kernels_gpu_host::problem::shape::MatmulShape;
use kernels_gpu_host::problem::tile::TileWidth;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One implementation in the comparison: one of our kernels (at a tile width, for the
/// lecture's tiled ones), or cuBLAS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Contender {
    /// `tw` is `None` for kernels without a tile width (the naive one).
    Kernel {
        kernel: MatmulKernel,
        tw: Option<TileWidth>,
    },
    /// The BF16 GEMM (rung 13) in configuration `BF16_CONFIGS[i]`, on BF16 copies of the
    /// operands (the ones cuBLAS BF16 reads).
    Bf16Gemm(usize),
    /// Rung 14 (TF32 on Hopper's `wgmma`) or 15 (TF32 `mma.sync`) in configuration
    /// `PACKED_CONFIGS[i]`, packing of the operands included.
    Packed(usize),
    /// Rung 17 (Hopper) on the BF16 copies of the operands (the ones cuBLAS BF16 reads), in
    /// the run the autotuner chooses for the shape: the kernel alone, as `--suite
    /// --precision bf16` times it (the CLI's `sgemm-autotuned-bf16` also converts f32
    /// inputs, and says how long each part takes).
    Half,
    Cublas(CublasMath),
}

impl Contender {
    /// `kernel` at `tw`; the tile width is dropped for kernels that have none.
    pub fn kernel(kernel: MatmulKernel, tw: TileWidth) -> Self {
        Self::Kernel {
            kernel,
            tw: kernel.is_tiled().then_some(tw),
        }
    }

    /// Every kernel at every tile width it has, the BF16 GEMM's configurations, then
    /// cuBLAS in each math mode.
    pub fn all() -> Vec<Self> {
        MatmulKernel::ALL
            .iter()
            .flat_map(|&k| k.tile_widths().iter().map(move |&tw| Self::kernel(k, tw)))
            .chain((0..BF16_CONFIGS.len()).map(Self::Bf16Gemm))
            .chain((0..PACKED_CONFIGS.len()).map(Self::Packed))
            .chain([Self::Half])
            .chain(CublasMath::ALL.map(Self::Cublas))
            .collect()
    }

    /// The kernel's or cuBLAS's name, without the tile width: `tiled-static`, `cublas`.
    pub fn family(&self) -> &'static str {
        match self {
            Self::Kernel { kernel, .. } => kernel.name(),
            Self::Bf16Gemm(i) => BF16_CONFIGS[*i].name,
            Self::Packed(i) => PACKED_CONFIGS[*i].name,
            Self::Half => HALF_NAME,
            Self::Cublas(_) => "cublas",
        }
    }

    /// What tells apart contenders of one family: `tw16`, `fp32`, or `None`.
    pub fn variant(&self) -> Option<String> {
        match self {
            Self::Kernel { tw, .. } => tw.map(|tw| format!("tw{tw}")),
            Self::Bf16Gemm(_) | Self::Packed(_) | Self::Half => None,
            Self::Cublas(math) => Some(math.name().to_owned()),
        }
    }

    /// How reports name it: `naive`, `tiled-static tw16`, `cuBLAS FP32`.
    pub fn label(&self) -> String {
        match self {
            Self::Kernel { kernel, tw: None } => kernel.name().to_owned(),
            Self::Kernel {
                kernel,
                tw: Some(tw),
            } => format!("{} tw{tw}", kernel.name()),
            Self::Bf16Gemm(i) => BF16_CONFIGS[*i].name.to_owned(),
            Self::Packed(i) => PACKED_CONFIGS[*i].name.to_owned(),
            Self::Half => HALF_NAME.to_owned(),
            Self::Cublas(math) => math.label().to_owned(),
        }
    }
}

/// How reports name [`Contender::Half`].
pub const HALF_NAME: &str = "gemm-bf16-ws-autotuned";

impl std::fmt::Display for Contender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

pub use kernels_gpu_host::check::spot::{Check, f32_bound};

/// The bound when the inputs are first rounded (or truncated) to TF32's 10-bit mantissa:
/// `2⁻⁹` for the two inputs of each product, plus FP32 accumulation.
pub fn tf32_bound(k: u32) -> f64 {
    2f64.powi(-9) + f32_bound(k)
}

/// The bound when the inputs are first rounded (or truncated) to BF16's 7 stored bits:
/// `2⁻⁶` for the two inputs of each product, plus FP32 accumulation.
pub fn bf16_bound(k: u32) -> f64 {
    2f64.powi(-6) + f32_bound(k)
}

/// The bound for `contender`'s arithmetic.
pub fn bound_for(contender: Contender, k: u32) -> f64 {
    match contender {
        Contender::Cublas(CublasMath::Tf32) => tf32_bound(k),
        Contender::Cublas(CublasMath::Bf16) => bf16_bound(k),
        // Our kernels round to nearest (TF32: `cvt.rna`), so their bound is the host's.
        Contender::Kernel { kernel, .. } => {
            kernels_gpu_host::check::reference::error_bound(k as usize, kernel.precision())
        }
        // Inputs rounded to nearest even on the host, exact products, f32 accumulation.
        Contender::Bf16Gemm(_) | Contender::Half => {
            kernels_gpu_host::check::reference::error_bound(k as usize, Precision::Bf16)
        }
        // Inputs rounded by `cvt.rna` when packed, as rung 11 rounds.
        Contender::Packed(_) => {
            kernels_gpu_host::check::reference::error_bound(k as usize, Precision::Tf32)
        }
        _ => f32_bound(k),
    }
}

/// One contender on one shape, timed by the bench.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    pub contender: Contender,
    pub shape: MatmulShape,
    /// Median of the timed runs, in milliseconds.
    pub ms_median: f64,
    /// Fastest timed run, in milliseconds.
    pub ms_min: f64,
    /// Timed runs.
    pub runs: usize,
    pub check: Option<Check>,
}

impl Measurement {
    /// `2·m·k·n` over the median time.
    pub fn gflops(&self) -> f64 {
        self.shape.flops() / (self.ms_median * 1e-3) / 1e9
    }
}

/// Everything the summary shows: where and how it was measured, and the measurements.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// E.g. `NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)`.
    pub device: String,
    /// E.g. `CUDA driver API 13.0, cuBLAS 13.1.0`.
    pub driver: String,
    /// E.g. `2026-04-05 14:03 UTC` (see [`utc_now`]).
    pub date: String,
    /// How each number was measured, one sentence.
    pub method: String,
    /// Anything else worth knowing (environment overrides, skipped contenders).
    pub notes: Vec<String>,
    pub measurements: Vec<Measurement>,
}

/// Where [`Summary::write`] put its files.
#[derive(Clone, Debug)]
pub struct SummaryFiles {
    pub markdown: PathBuf,
    pub svg: PathBuf,
}

/// `1234567.8` → `1,234,568`.
fn thousands(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 && digits != "0" {
        out.insert(0, '-');
    }
    out
}

/// `23.456` → `23%`, `4.56` → `4.6%`, `0.0123` → `0.01%`.
fn percent(p: f64) -> String {
    // Thresholds where the shorter format's rounding starts, so 9.99 reads 10%, not 10.0%.
    if p >= 9.95 {
        format!("{p:.0}%")
    } else if p >= 0.995 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

/// How a section is headed: `5120×256×5120 (m×k×n)`, or `1024³ (1024×1024×1024)`.
fn heading(shape: MatmulShape) -> String {
    if shape.m == shape.k && shape.k == shape.n {
        format!("{} ({shape})", shape_label(shape))
    } else {
        format!("{shape} (m×k×n)")
    }
}

/// How a shape is headed: `5120×256×5120`, or `1024³` where all three agree.
pub fn shape_label(shape: MatmulShape) -> String {
    if shape.m == shape.k && shape.k == shape.n {
        format!("{}³", shape.m)
    } else {
        shape.to_string()
    }
}

/// The distinct values of `items`, in the order first seen.
fn first_seen<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = vec![];
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

impl Summary {
    /// The shapes measured, in the order first measured.
    pub fn shapes(&self) -> Vec<MatmulShape> {
        first_seen(self.measurements.iter().map(|m| m.shape))
    }

    /// The contenders measured, in the order first measured.
    pub fn contenders(&self) -> Vec<Contender> {
        first_seen(self.measurements.iter().map(|m| m.contender))
    }

    /// The measurement of `contender` on `shape`, if there is one.
    pub fn get(&self, contender: Contender, shape: MatmulShape) -> Option<&Measurement> {
        self.measurements
            .iter()
            .find(|m| m.contender == contender && m.shape == shape)
    }

    /// `m`'s GFLOP/s as a percentage of cuBLAS's in `math` on the same shape.
    pub fn percent_of(&self, m: &Measurement, math: CublasMath) -> Option<f64> {
        let base = self.get(Contender::Cublas(math), m.shape)?;
        Some(100.0 * m.gflops() / base.gflops())
    }

    /// The fastest of our kernels (lecture or SGEMM ladder) on `shape`.
    pub fn best_kernel(&self, shape: MatmulShape) -> Option<&Measurement> {
        self.measurements
            .iter()
            .filter(|m| m.shape == shape && matches!(m.contender, Contender::Kernel { .. }))
            .max_by(|a, b| a.gflops().total_cmp(&b.gflops()))
    }

    /// Whether cuBLAS in `math` was measured.
    fn has(&self, math: CublasMath) -> bool {
        self.measurements
            .iter()
            .any(|m| m.contender == Contender::Cublas(math))
    }

    /// The summary as markdown: [`overview`](Self::overview), then a table per shape with
    /// times, GFLOP/s, % of cuBLAS FP32 and TF32, and the result check.
    pub fn markdown(&self) -> String {
        self.overview() + &self.details()
    }

    /// The top of [`markdown`](Self::markdown): device, driver, date and method, the best
    /// kernel per shape, and a contender × shape table of GFLOP/s (% of cuBLAS FP32).
    pub fn overview(&self) -> String {
        let shapes = self.shapes();
        let contenders = self.contenders();
        let has_fp32 = self.has(CublasMath::Fp32);
        let mut s = String::new();
        // Writing to a String cannot fail.
        let _ = writeln!(s, "# Matmul benchmark summary\n");
        let _ = writeln!(s, "- **Device:** {}", self.device);
        let _ = writeln!(s, "- **Driver:** {}", self.driver);
        let _ = writeln!(s, "- **Date:** {}", self.date);
        let _ = writeln!(s, "- **Method:** {}", self.method);
        for note in &self.notes {
            let _ = writeln!(s, "- **Note:** {note}");
        }

        let _ = writeln!(s, "\n## Best Rust kernel per shape\n");
        for &shape in &shapes {
            let Some(best) = self.best_kernel(shape) else {
                continue;
            };
            let mut line = format!(
                "- **{}**: {} at {} GFLOP/s",
                shape_label(shape),
                best.contender,
                thousands(best.gflops())
            );
            for math in CublasMath::ALL {
                if let Some(p) = self.percent_of(best, math) {
                    let _ = write!(line, ", {} of {}", percent(p), math.label());
                }
            }
            let _ = writeln!(s, "{line}");
        }

        let _ = writeln!(
            s,
            "\n## At a glance: GFLOP/s{}\n",
            if has_fp32 {
                " (% of cuBLAS FP32 on the same shape)"
            } else {
                ""
            }
        );
        let _ = write!(s, "| implementation |");
        for &shape in &shapes {
            let _ = write!(s, " {} |", shape_label(shape));
        }
        let _ = write!(s, "\n|---|");
        for _ in &shapes {
            let _ = write!(s, "---:|");
        }
        let _ = writeln!(s);
        for &c in &contenders {
            let _ = write!(s, "| {c} |");
            for &shape in &shapes {
                let cell = match self.get(c, shape) {
                    None => "–".to_owned(),
                    Some(m) => match self.percent_of(m, CublasMath::Fp32) {
                        Some(p) => format!("{} ({})", thousands(m.gflops()), percent(p)),
                        None => thousands(m.gflops()),
                    },
                };
                let _ = write!(s, " {cell} |");
            }
            let _ = writeln!(s);
        }
        s
    }

    /// The per-shape tables of [`markdown`](Self::markdown).
    fn details(&self) -> String {
        let modes: Vec<CublasMath> = CublasMath::ALL
            .into_iter()
            .filter(|&math| self.has(math))
            .collect();
        let mut s = String::new();
        for shape in self.shapes() {
            let _ = writeln!(
                s,
                "\n## {}: {:.2} GFLOP per product\n",
                heading(shape),
                shape.flops() / 1e9
            );
            let mut head = "| implementation | median ms | min ms | GFLOP/s |".to_owned();
            let mut rule = "|---|---:|---:|---:|".to_owned();
            for math in &modes {
                let _ = write!(head, " % of {} |", math.label());
                rule += "---:|";
            }
            head += " check |";
            rule += "---|";
            let _ = writeln!(s, "{head}\n{rule}");
            for m in self.measurements.iter().filter(|m| m.shape == shape) {
                let _ = write!(
                    s,
                    "| {} | {:.3} | {:.3} | {} |",
                    m.contender,
                    m.ms_median,
                    m.ms_min,
                    thousands(m.gflops())
                );
                for &math in &modes {
                    let cell = self.percent_of(m, math).map_or("–".to_owned(), percent);
                    let _ = write!(s, " {cell} |");
                }
                let check = match m.check {
                    None => "–".to_owned(),
                    Some(c) => format!(
                        "{} ({:.1e} {} {:.1e}, {} elements)",
                        if c.ok() { "ok" } else { "**WRONG**" },
                        c.max_scaled_err,
                        if c.ok() { "≤" } else { ">" },
                        c.bound,
                        c.samples
                    ),
                };
                let _ = writeln!(s, " {check} |");
            }
        }
        let _ = writeln!(
            s,
            "\nGFLOP/s = 2·m·k·n / median time. The check compares sampled output elements \
             with an f64 dot product; the error is in units of Σ|a||b|, the bound is k·2⁻²³ \
             for FP32 arithmetic (plus 2⁻⁹ for TF32's rounded inputs)."
        );
        s
    }

    /// Draws GFLOP/s per contender, one panel per shape, on a shared log scale, to an SVG
    /// file at `path`. Bars are labelled with GFLOP/s and % of cuBLAS FP32; a dashed line
    /// marks cuBLAS FP32.
    pub fn write_svg(&self, path: &Path) -> Result<(), String> {
        use plotters::prelude::*;
        use plotters::style::text_anchor::{HPos, Pos, VPos};

        let shapes = self.shapes();
        let contenders = self.contenders();
        if shapes.is_empty() {
            return Err("no measurements to draw".to_owned());
        }
        let n = contenders.len();
        let (width, title_h, panel_h) = (1300u32, 70u32, 70 + 24 * n as u32);
        let height = title_h + panel_h * shapes.len() as u32;
        let err = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", path.display());

        let (lo, hi) = {
            let (min, max) = self
                .measurements
                .iter()
                .map(Measurement::gflops)
                .filter(|g| g.is_finite() && *g > 0.0)
                .fold((f64::INFINITY, 0.0f64), |(lo, hi), g| {
                    (lo.min(g), hi.max(g))
                });
            if max <= 0.0 {
                (1.0, 10.0)
            } else {
                // Whole decades, with room on the right for the labels.
                (
                    10f64.powf(min.log10().floor()),
                    10f64.powf((max * 6.0).log10().ceil()),
                )
            }
        };

        let root = SVGBackend::new(path, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (title, body) = root.split_vertically(title_h);
        title
            .draw_text(
                "Matmul throughput, GFLOP/s (log scale)",
                &("sans-serif", 22).into_font().color(&BLACK),
                (16, 10),
            )
            .map_err(|e| err(&e))?;
        title
            .draw_text(
                &format!("{} · {} · {}", self.device, self.driver, self.date),
                &("sans-serif", 14).into_font().color(&RGBColor(80, 80, 80)),
                (16, 42),
            )
            .map_err(|e| err(&e))?;

        // Wide enough for the longest name (about 7 px a character at this font size): the
        // SGEMM configurations' names are long.
        let label_width = contenders
            .iter()
            .map(|c| c.label().chars().count() as u32 * 7 + 16)
            .max()
            .unwrap_or(0)
            .max(190);
        let panels = body.split_evenly((shapes.len(), 1));
        for (panel, &shape) in panels.iter().zip(&shapes) {
            let mut chart = ChartBuilder::on(panel)
                .caption(
                    format!(
                        "{}, {:.1} GFLOP per product",
                        heading(shape),
                        shape.flops() / 1e9
                    ),
                    ("sans-serif", 17),
                )
                .margin_left(16)
                .margin_right(48)
                .margin_top(6)
                .margin_bottom(6)
                .x_label_area_size(28)
                .y_label_area_size(label_width)
                // `0..n - 1` as segments: n of them (the range's ends are both values).
                .build_cartesian_2d((lo..hi).log_scale(), (0..n - 1).into_segmented())
                .map_err(|e| err(&e))?;
            // Row i of the chart (counted from the bottom) shows contender n-1-i, so that
            // the first contender is on top.
            let row = |c: usize| n - 1 - c;
            let labels: Vec<String> = contenders.iter().map(Contender::label).collect();
            chart
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(n)
                .y_label_formatter(&|v: &SegmentValue<usize>| match v {
                    SegmentValue::CenterOf(i) if *i < n => labels[row(*i)].clone(),
                    _ => String::new(),
                })
                .x_label_formatter(&|v: &f64| thousands(*v))
                .x_desc("GFLOP/s")
                .label_style(("sans-serif", 13))
                .light_line_style(RGBColor(235, 235, 235))
                .draw()
                .map_err(|e| err(&e))?;

            let fp32 = self
                .get(Contender::Cublas(CublasMath::Fp32), shape)
                .map(Measurement::gflops);
            // cuBLAS FP32 as a line through every row, under the bars and labels.
            if let Some(f) = fp32 {
                chart
                    .draw_series([PathElement::new(
                        vec![(f, SegmentValue::Exact(0)), (f, SegmentValue::Exact(n))],
                        RGBColor(214, 39, 40).mix(0.5).stroke_width(2),
                    )])
                    .map_err(|e| err(&e))?;
            }
            for (c, &contender) in contenders.iter().enumerate() {
                let Some(m) = self.get(contender, shape) else {
                    continue;
                };
                let g = m.gflops().clamp(lo, hi);
                let y = row(c);
                let mut bar = Rectangle::new(
                    [
                        (lo, SegmentValue::Exact(y)),
                        (g, SegmentValue::Exact(y + 1)),
                    ],
                    color(contender).filled(),
                );
                bar.set_margin(3, 3, 0, 0);
                chart.draw_series([bar]).map_err(|e| err(&e))?;
                let mut text = format!("{} GFLOP/s", thousands(m.gflops()));
                if let Some(p) = self.percent_of(m, CublasMath::Fp32) {
                    let _ = write!(text, " · {} of cuBLAS FP32", percent(p));
                }
                if m.check.is_some_and(|c| !c.ok()) {
                    text += " · WRONG RESULT";
                }
                let style = ("sans-serif", 12)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Center));
                chart
                    .draw_series([Text::new(
                        format!(" {text}"),
                        (g, SegmentValue::CenterOf(y)),
                        style,
                    )])
                    .map_err(|e| err(&e))?;
            }
        }
        root.present().map_err(|e| err(&e))?;
        Ok(())
    }

    /// Writes `summary.md` and `summary.svg` into `dir` (created if missing).
    pub fn write(&self, dir: &Path) -> std::io::Result<SummaryFiles> {
        std::fs::create_dir_all(dir)?;
        let files = SummaryFiles {
            markdown: dir.join("summary.md"),
            svg: dir.join("summary.svg"),
        };
        std::fs::write(&files.markdown, self.markdown())?;
        self.write_svg(&files.svg).map_err(std::io::Error::other)?;
        Ok(files)
    }
}

/// The bar colour: one hue per kernel, lighter for smaller tiles; red and purple for cuBLAS.
fn color(c: Contender) -> plotters::style::RGBColor {
    use plotters::style::RGBColor;
    let (base, tw) = match c {
        Contender::Cublas(CublasMath::Fp32) => ((214, 39, 40), None),
        Contender::Cublas(CublasMath::Tf32) => ((148, 103, 189), None),
        Contender::Cublas(CublasMath::Bf16) => ((140, 86, 75), None),
        Contender::Bf16Gemm(_) => ((188, 189, 34), None),
        Contender::Half => ((106, 61, 154), None),
        Contender::Packed(_) => ((23, 190, 207), None),
        Contender::Kernel { kernel, tw } => (
            match kernel {
                MatmulKernel::Naive => (127, 127, 127),
                MatmulKernel::TiledDynamic => (31, 119, 180),
                MatmulKernel::TiledStatic => (44, 160, 44),
                MatmulKernel::TiledDynamicConst => (255, 127, 14),
                MatmulKernel::Sgemm(k) => sgemm_color(k),
            },
            tw,
        ),
    };
    // Mix with white: tw8 lightest, tw32 the full colour.
    let white = match tw {
        Some(TileWidth::Tw8) => 0.5,
        Some(TileWidth::Tw16) => 0.25,
        _ => 0.0,
    };
    let mix = |v: u8| (v as f64 + (255.0 - v as f64) * white).round() as u8;
    RGBColor(mix(base.0), mix(base.1), mix(base.2))
}

/// The SGEMM ladder's bars: cyan for rungs 1-5, olive for warp tiling, pink for double
/// buffering and after, red for the tensor cores (TF32, BF16), black for the autotuned
/// choices.
fn sgemm_color(k: kernels_gpu_host::SgemmKernel) -> (u8, u8, u8) {
    match k {
        auto if auto.is_autotuned() => (0, 0, 0),
        config => match config.config().rung {
            1..=5 => (23, 190, 207),
            6 => (188, 189, 34),
            11 => (214, 39, 40),
            _ => (227, 119, 194),
        },
    }
}

/// Now, as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc_from_unix(secs)
}

/// `secs` since the Unix epoch as `YYYY-MM-DD HH:MM UTC` (proleptic Gregorian calendar).
pub fn utc_from_unix(secs: u64) -> String {
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// Criterion as these benches use it: plots drawn with plotters into [`criterion_home`], 10
/// samples, the given warm-up and measurement times, then the command line's options.
pub fn criterion(
    warm_up: std::time::Duration, measurement: std::time::Duration,
) -> criterion::Criterion {
    criterion::Criterion::default()
        .plotting_backend(criterion::PlottingBackend::Plotters)
        .output_directory(&criterion_home())
        .sample_size(10)
        .warm_up_time(warm_up)
        .measurement_time(measurement)
        .configure_from_args()
}

/// Criterion's output folder, where the summary goes beside its HTML report: `$CRITERION_HOME`
/// if set, else `criterion/` in the cargo target folder the running executable was built in
/// (`<target>/release/deps/matmul-*` → `<target>/criterion`), else `$CARGO_TARGET_DIR/criterion`,
/// else `target/criterion`.
pub fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let from_exe = std::env::current_exe().ok().and_then(|exe| {
        let deps = exe.parent()?;
        (deps.file_name()? == "deps").then(|| deps.parent()?.parent().map(Path::to_path_buf))?
    });
    if let Some(target) = from_exe {
        return target.join("criterion");
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    PathBuf::from("target/criterion")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(m: usize, k: usize, n: usize) -> MatmulShape {
        MatmulShape::new(m, k, n).unwrap()
    }

    /// Every contender on two shapes; cuBLAS FP32 at 20 TFLOP/s, TF32 at 200, BF16 at 400,
    /// kernels slower.
    fn synthetic() -> Summary {
        let mut measurements = vec![];
        for s in [shape(5120, 256, 5120), shape(1024, 1024, 1024)] {
            for (i, c) in Contender::all().into_iter().enumerate() {
                let gflops = match c {
                    Contender::Cublas(CublasMath::Fp32) => 20_000.0,
                    Contender::Cublas(CublasMath::Tf32) => 200_000.0,
                    Contender::Cublas(CublasMath::Bf16) => 400_000.0,
                    _ => 500.0 * (i + 1) as f64,
                };
                let ms = s.flops() / (gflops * 1e9) * 1e3;
                measurements.push(Measurement {
                    contender: c,
                    shape: s,
                    ms_median: ms,
                    ms_min: ms * 0.98,
                    runs: 20,
                    check: Some(Check {
                        samples: 64,
                        max_scaled_err: if i == 3 { 0.5 } else { 1e-7 },
                        bound: bound_for(c, s.k),
                    }),
                });
            }
        }
        Summary {
            device: "Synthetic GPU (sm_90, 80.0 GiB)".into(),
            driver: "CUDA driver API 13.0, cuBLAS 13.1.0".into(),
            date: utc_from_unix(0),
            method: "made up".into(),
            notes: vec!["a note".into()],
            measurements,
        }
    }

    #[test]
    fn contenders_cover_every_kernel_and_tile_width_and_cublas() {
        let all = Contender::all();
        assert_eq!(
            all.len(),
            1 + 3 * 3
                + kernels_gpu_host::SgemmKernel::ALL.len()
                + BF16_CONFIGS.len()
                + PACKED_CONFIGS.len()
                + 1 // the 16-bit-input rung, Contender::Half
                + CublasMath::ALL.len()
        );
        assert!(all.iter().any(|c| c.label() == HALF_NAME));
        assert!(all.iter().any(|c| c.label() == "sgemm-autotuned"));
        assert_eq!(all[0].label(), "naive");
        assert!(all.iter().any(|c| c.label() == "tiled-dynamic-const tw32"));
        assert!(all.iter().any(|c| c.label() == BF16_CONFIGS[0].name));
        assert_eq!(all[all.len() - 3].label(), "cuBLAS FP32");
        assert_eq!(all[all.len() - 2].label(), "cuBLAS TF32");
        assert_eq!(all[all.len() - 1].label(), "cuBLAS BF16");
        assert_eq!(all[0].variant(), None);
        assert_eq!(all[1].variant().as_deref(), Some("tw8"));
    }

    #[test]
    fn markdown_has_every_row_and_the_percent_columns() {
        let summary = synthetic();
        let md = summary.markdown();
        for c in Contender::all() {
            // Once in the overview, once per shape table.
            let rows = md.matches(&format!("| {} |", c.label())).count();
            assert_eq!(rows, 3, "{c} rows in\n{md}");
        }
        assert!(md.contains("% of cuBLAS FP32 |"), "{md}");
        assert!(md.contains("% of cuBLAS TF32 |"), "{md}");
        assert!(md.contains("Synthetic GPU"));
        assert!(md.contains("CUDA driver API 13.0"));
        assert!(md.contains("1970-01-01 00:00 UTC"));
        assert!(md.contains("## 5120×256×5120"));
        assert!(md.contains("## 1024³"));
        // cuBLAS FP32 is 100% of itself and 10% of TF32.
        assert!(md.contains("| cuBLAS FP32 | "));
        let fp32_row = md
            .lines()
            .find(|l| l.starts_with("| cuBLAS FP32 | ") && l.contains("ok ("))
            .unwrap();
        assert!(fp32_row.contains("| 20,000 | 100% | 10% |"), "{fp32_row}");
        // naive: 500 GFLOP/s = 2.5% of FP32.
        assert!(md.contains("| naive | 500 (2.5%) | 500 (2.5%) |"), "{md}");
        // The failed check is flagged.
        assert!(md.contains("**WRONG**"));
        // The best kernel is named: the last of the f32-operand kernels (an autotuned SGEMM),
        // 500 GFLOP/s per place. (The BF16 GEMM's rows, on BF16 operands, are not in the
        // running.)
        let kernels: Vec<_> = Contender::all()
            .into_iter()
            .filter(|c| matches!(c, Contender::Kernel { .. }))
            .collect();
        let (last, best) = (kernels[kernels.len() - 1], 500 * kernels.len());
        assert!(
            md.contains(&format!(
                "{} at {} GFLOP/s",
                last.label(),
                thousands(best as f64)
            )),
            "{md}"
        );
    }

    #[test]
    fn markdown_without_cublas_has_no_percent_columns() {
        let mut summary = synthetic();
        summary
            .measurements
            .retain(|m| !matches!(m.contender, Contender::Cublas(_)));
        let md = summary.markdown();
        assert!(!md.contains("% of"), "{md}");
        assert!(md.contains("| naive | 500 | 500 |"), "{md}");
    }

    #[test]
    fn files_are_written_and_not_empty() {
        let dir = std::env::temp_dir().join(format!("bench-report-test-{}", std::process::id()));
        let files = synthetic().write(&dir).unwrap();
        let svg = std::fs::read_to_string(&files.svg).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
        assert!(svg.len() > 1000);
        assert!(svg.contains("tiled-static tw16"));
        assert!(svg.contains("cuBLAS TF32"));
        let md = std::fs::read_to_string(&files.markdown).unwrap();
        assert!(md.starts_with("# Matmul benchmark summary"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn svg_of_nothing_is_an_error() {
        let path = std::env::temp_dir().join("bench-report-empty.svg");
        assert!(Summary::default().write_svg(&path).is_err());
    }

    #[test]
    fn formats() {
        assert_eq!(thousands(1_234_567.8), "1,234,568");
        assert_eq!(thousands(999.4), "999");
        assert_eq!(thousands(0.2), "0");
        assert_eq!(percent(23.456), "23%");
        assert_eq!(percent(4.56), "4.6%");
        assert_eq!(percent(9.99), "10%");
        assert_eq!(percent(0.999), "1.0%");
        assert_eq!(percent(0.0123), "0.01%");
        assert_eq!(shape_label(shape(4096, 4096, 4096)), "4096³");
        assert_eq!(shape_label(shape(5120, 256, 5120)), "5120×256×5120");
        assert_eq!(utc_from_unix(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_from_unix(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc_from_unix(1_775_390_580), "2026-04-05 12:03 UTC");
    }
}

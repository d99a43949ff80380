//! Frame-time recording (`spanprof --frame-stats FILE`): while a run streams, each frame's CPU
//! time is kept, and appended to the file as CSV when the run ends. This is how the claim "the
//! window keeps redrawing smoothly while a million rows stream" is measured.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// One frame drawn while a run streamed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameSample {
    /// Our own `logic` + `ui` time for this frame, milliseconds.
    pub ui_ms: f64,
    /// eframe's CPU time of the previous whole frame (egui, tessellation, painting), milliseconds.
    pub cpu_ms: Option<f64>,
    /// Wall time since the previous frame began, milliseconds.
    pub interval_ms: Option<f64>,
}

/// Records frames while a run streams, and appends them to a CSV file when it ends.
#[derive(Debug)]
pub struct FrameStats {
    path: PathBuf,
    samples: Vec<FrameSample>,
    last_frame: Option<Instant>,
}

impl FrameStats {
    /// Records into `path` (appended; a header is written if the file is new).
    pub fn new(path: PathBuf) -> Self {
        FrameStats {
            path,
            samples: Vec::new(),
            last_frame: None,
        }
    }

    /// Records one frame; `started` is when this frame's `logic` began.
    pub fn record(&mut self, started: Instant, cpu_usage: Option<f32>) {
        let interval_ms = self
            .last_frame
            .map(|last| started.duration_since(last).as_secs_f64() * 1e3);
        self.last_frame = Some(started);
        self.samples.push(FrameSample {
            ui_ms: started.elapsed().as_secs_f64() * 1e3,
            cpu_ms: cpu_usage.map(|s| f64::from(s) * 1e3),
            interval_ms,
        });
    }

    /// Frames recorded and not yet written.
    pub fn samples(&self) -> &[FrameSample] {
        &self.samples
    }

    /// Appends the recorded frames to the file (one line each: run label, ui_ms, cpu_ms,
    /// interval_ms) and forgets them.
    pub fn flush(&mut self, run: &str) -> std::io::Result<()> {
        self.last_frame = None;
        if self.samples.is_empty() {
            return Ok(());
        }
        let new = !self.path.exists();
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        let mut text = String::new();
        if new {
            text.push_str("run,ui_ms,cpu_ms,interval_ms\n");
        }
        let opt = |v: Option<f64>| v.map_or_else(String::new, |v| format!("{v:.3}"));
        let run = run.replace([',', '\n'], " ");
        for s in self.samples.drain(..) {
            text.push_str(&format!(
                "{run},{:.3},{},{}\n",
                s.ui_ms,
                opt(s.cpu_ms),
                opt(s.interval_ms)
            ));
        }
        file.write_all(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_appended_as_csv_with_one_header() -> std::io::Result<()> {
        let dir = std::env::temp_dir().join(format!("spanprof-frames-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let path = dir.join("frames.csv");
        let _ = std::fs::remove_file(&path);
        let mut stats = FrameStats::new(path.clone());
        stats.record(Instant::now(), Some(0.002));
        stats.record(Instant::now(), None);
        stats.flush("a")?;
        stats.record(Instant::now(), Some(0.001));
        stats.flush("b")?;
        let text = std::fs::read_to_string(&path)?;
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0], "run,ui_ms,cpu_ms,interval_ms");
        assert!(lines[1].starts_with("a,") && lines[1].contains(",2.000,"));
        assert!(
            lines[3].starts_with("b,") && lines[3].ends_with(','),
            "{text}"
        );
        std::fs::remove_dir_all(&dir)
    }
}

//! `spanprof load --vary SETTING=V1,V2`'s argument: the setting varied (the lock mode, the
//! isolation, the max commit delay, the Zipf skew) and its values, each checked as the setting's
//! own flag checks it. The runs are `load_variants.rs`'s.

use clap::ValueEnum as _;

use super::read_write::{IsolationArg, LockModeArg, parse_delay};

/// The most values one `--vary` takes.
pub const MAX_VALUES: usize = 16;

/// The setting `--vary` varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// `--lock-mode`.
    LockMode,
    /// `--isolation`.
    Isolation,
    /// `--max-commit-delay`.
    MaxCommitDelay,
    /// The exponent of every zipf-drawn `--param`.
    Skew,
}

impl Setting {
    /// Every setting, as `--vary` lists them.
    pub const ALL: [Setting; 4] = [
        Setting::LockMode,
        Setting::Isolation,
        Setting::MaxCommitDelay,
        Setting::Skew,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Setting::LockMode => "lock-mode",
            Setting::Isolation => "isolation",
            Setting::MaxCommitDelay => "max-commit-delay",
            Setting::Skew => "skew",
        }
    }

    /// `value` as this setting takes it, written as the runs are labelled; an error saying what
    /// it takes otherwise.
    pub(super) fn value(self, value: &str) -> Result<String, String> {
        let value = value.trim();
        let bad = |takes: &str| format!("--vary {}: {value:?} is not {takes}", self.name());
        match self {
            Setting::LockMode => LockModeArg::from_str(value, true)
                .map(|_| value.to_ascii_lowercase())
                .map_err(|_| bad("a lock mode (pessimistic, optimistic)")),
            Setting::Isolation => IsolationArg::from_str(value, true)
                .map(|_| value.to_ascii_lowercase())
                .map_err(|_| bad("an isolation level (serializable, repeatable-read)")),
            Setting::MaxCommitDelay => parse_delay(value)
                .map(|_| value.to_owned())
                .map_err(|e| format!("{}: {e}", bad("a max commit delay (0ms to 500ms)"))),
            Setting::Skew => match value.parse::<f64>() {
                Ok(s) if s.is_finite() && s > 0.0 => Ok(value.to_owned()),
                _ => Err(bad("a Zipf exponent (a number above 0)")),
            },
        }
    }

    /// The flag that sets it for one run, if it has one.
    pub(super) fn flag(self) -> Option<&'static str> {
        match self {
            Setting::Skew => None,
            other => Some(other.name()),
        }
    }
}

/// `--vary SETTING=V1,V2,...`: the setting and its values, each checked, two or more.
#[derive(Debug, Clone, PartialEq)]
pub struct Vary {
    /// The setting.
    pub setting: Setting,
    /// Its values, in the order run.
    pub values: Vec<String>,
}

/// Reads `--vary SETTING=V1,V2,...`.
pub fn parse_vary(text: &str) -> Result<Vary, String> {
    let names = || {
        Setting::ALL
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (name, values) = text
        .split_once('=')
        .ok_or_else(|| format!("expected SETTING=V1,V2 (a setting of {})", names()))?;
    let setting = Setting::ALL
        .into_iter()
        .find(|s| s.name() == name.trim().to_ascii_lowercase())
        .ok_or_else(|| {
            format!(
                "unknown setting {:?}: --vary takes {}",
                name.trim(),
                names()
            )
        })?;
    let values = values
        .split(',')
        .map(|v| setting.value(v))
        .collect::<Result<Vec<_>, _>>()?;
    if values.len() < 2 {
        return Err(format!(
            "--vary {} needs two values or more to compare (V1,V2)",
            setting.name()
        ));
    }
    if values.len() > MAX_VALUES {
        return Err(format!("--vary takes at most {MAX_VALUES} values"));
    }
    if let Some(twice) = values
        .iter()
        .enumerate()
        .find(|(i, v)| values[..*i].contains(v))
    {
        return Err(format!(
            "--vary {}: {} is given twice",
            setting.name(),
            twice.1
        ));
    }
    Ok(Vary { setting, values })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vary_reads_each_setting_s_values_and_refuses_what_it_cannot_run() {
        let v = parse_vary("lock-mode=Pessimistic,optimistic").expect("valid");
        assert_eq!(v.setting, Setting::LockMode);
        assert_eq!(v.values, ["pessimistic", "optimistic"]);
        assert_eq!(
            parse_vary("max-commit-delay=0ms,100ms")
                .expect("valid")
                .values,
            ["0ms", "100ms"]
        );
        assert_eq!(
            parse_vary("skew=0.5,2").expect("valid").setting,
            Setting::Skew
        );
        for (bad, says) in [
            ("colour=red,blue", "unknown setting \"colour\""),
            ("lock-mode", "expected SETTING=V1,V2"),
            ("lock-mode=optimistic", "two values or more"),
            ("lock-mode=optimistic,eager", "not a lock mode"),
            ("isolation=serializable,snapshot", "not an isolation level"),
            ("max-commit-delay=0ms,900ms", "between 0ms and 500ms"),
            ("skew=1,0", "not a Zipf exponent"),
            ("skew=1,nan", "not a Zipf exponent"),
            ("lock-mode=optimistic,Optimistic", "given twice"),
        ] {
            let e = parse_vary(bad).expect_err(bad);
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}

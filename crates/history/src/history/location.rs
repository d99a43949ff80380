//! Where the history is: the default file under the user's data directory, another file
//! (`--history PATH`, `SPANPROF_HISTORY`), a Spanner database (`spanner://projects/P/instances/I/
//! databases/D`), or nowhere (`--no-history`).

use std::path::{Path, PathBuf};

use super::HistoryError;

/// The store's file name inside the data directory.
pub const FILE_NAME: &str = "history.sqlite";

/// A history store's place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Location {
    /// Nothing is saved or read.
    #[default]
    Off,
    /// A SQLite file.
    File(PathBuf),
    /// A Spanner database.
    Spanner(SpannerDatabase),
}

/// The database of a Spanner store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpannerDatabase {
    /// Project id.
    pub project: String,
    /// Instance id.
    pub instance: String,
    /// Database id.
    pub database: String,
}

impl SpannerDatabase {
    /// Its resource name.
    pub fn name(&self) -> String {
        crate::client::admin::database_name(&self.project, &self.instance, &self.database)
    }
}

impl Location {
    /// The store chosen by `--no-history` (`off`) or `--history TEXT` (`text`), else the default
    /// file; `None` when there is no data directory to put it in.
    pub fn choose(text: Option<&str>, off: bool) -> Result<Location, HistoryError> {
        if off {
            return Ok(Location::Off);
        }
        match text {
            Some(text) => Location::parse(text),
            None => default_path()
                .map(Location::File)
                .ok_or_else(|| HistoryError::BadLocation {
                    text: String::new(),
                    why: "no data directory ($XDG_DATA_HOME or $HOME): give --history PATH".into(),
                }),
        }
    }

    /// A path, or `spanner://projects/P/instances/I/databases/D`.
    pub fn parse(text: &str) -> Result<Location, HistoryError> {
        let bad = |why: &str| HistoryError::BadLocation {
            text: text.to_owned(),
            why: why.to_owned(),
        };
        let Some(rest) = text.strip_prefix("spanner://") else {
            if text.is_empty() {
                return Err(bad("an empty path"));
            }
            if let Some(scheme) = scheme_of(text) {
                return Err(bad(&format!(
                    "{scheme}:// is no store spanprof knows: a path, or \
                     spanner://projects/P/instances/I/databases/D (a file whose name begins so: \
                     ./{scheme}://...)"
                )));
            }
            return Ok(Location::File(PathBuf::from(text)));
        };
        let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
        match parts.as_slice() {
            ["projects", p, "instances", i, "databases", d]
                if [p, i, d].iter().all(|s| is_id(s)) =>
            {
                Ok(Location::Spanner(SpannerDatabase {
                    project: (*p).to_owned(),
                    instance: (*i).to_owned(),
                    database: (*d).to_owned(),
                }))
            }
            _ => Err(bad(
                "a Spanner store is spanner://projects/P/instances/I/databases/D",
            )),
        }
    }

    /// How a message names it.
    pub fn describe(&self) -> String {
        match self {
            Location::Off => "off".into(),
            Location::File(path) => path.display().to_string(),
            Location::Spanner(db) => format!("spanner://{}", db.name()),
        }
    }
}

/// The scheme of a URI-like text (`scheme://...`: a letter, then letters, digits, `+`, `-`, `.`).
fn scheme_of(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once("://")?;
    let mut chars = scheme.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    (starts && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(scheme)
}

fn is_id(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The default store: `$XDG_DATA_HOME/spanprof/history.sqlite` (`~/.local/share` without it),
/// `~/Library/Application Support/spanprof` on macOS, `%APPDATA%\spanprof` on Windows.
pub fn default_path() -> Option<PathBuf> {
    let env = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let base = if cfg!(windows) {
        env("APPDATA")
    } else if cfg!(target_os = "macos") {
        env("HOME").map(|h| h.join("Library").join("Application Support"))
    } else {
        env("XDG_DATA_HOME").or_else(|| env("HOME").map(|h| h.join(".local").join("share")))
    }?;
    Some(base.join("spanprof").join(FILE_NAME))
}

/// The directory a store file lives in (made when missing).
pub fn parent_of(path: &Path) -> Option<&Path> {
    path.parent().filter(|p| !p.as_os_str().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spanner_locations_name_a_database_and_anything_else_is_a_file() {
        assert_eq!(
            Location::parse("spanner://projects/p/instances/i/databases/d").ok(),
            Some(Location::Spanner(SpannerDatabase {
                project: "p".into(),
                instance: "i".into(),
                database: "d".into()
            }))
        );
        assert!(Location::parse("spanner://projects/p/databases/d").is_err());
        assert!(Location::parse("spanner://projects/p/instances/i/databases/d e").is_err());
        assert_eq!(
            Location::parse("runs.sqlite").ok(),
            Some(Location::File("runs.sqlite".into()))
        );
        assert_eq!(Location::choose(Some("x"), true).ok(), Some(Location::Off));
    }

    #[test]
    fn a_scheme_it_does_not_know_is_an_error_not_a_file_name() {
        for typo in [
            "spaner://projects/p/instances/i/databases/d",
            "file:///tmp/h.sqlite",
            "s3://b/k",
        ] {
            let err = Location::parse(typo).expect_err(typo).to_string();
            assert!(err.contains("is no store spanprof knows"), "{err}");
        }
        assert_eq!(
            Location::parse("./spaner://x").ok(),
            Some(Location::File("./spaner://x".into())),
            "a path that only looks like one"
        );
        assert!(Location::parse("C:\\runs\\h.sqlite").is_ok());
    }
}

//! The one place exports touch the file system, and where report and workload files are read back (within a bound).

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process;
use std::sync::atomic::{AtomicU64, Ordering};

use super::ExportError;

/// Writes `bytes` to `path` whole or not at all.
///
/// The bytes go to a new temporary file in the same directory, which is synced to disk and then
/// renamed over `path`, so that `path` (and any file it replaces) is never seen half-written, even
/// after a crash. On any failure the temporary file is removed, `path` is left as it was, and the
/// error names `path` and the reason ("cannot write /x/y.csv: Permission denied").
///
/// A file that is replaced gets the permissions of a new file, not its old ones.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    write_through(&mut TheDisk, path, bytes)
}

/// What [`write_atomically`] asks of the disk the temporary file is on: the seam through which a test
/// fills that disk (ENOSPC at the write or at the fsync) without a device file such as `/dev/full`.
trait Disk {
    /// Writes all of `bytes` to `file`.
    fn write_all(&mut self, file: &mut File, bytes: &[u8]) -> io::Result<()>;
    /// Flushes `file`'s data and metadata to the disk.
    fn sync_all(&mut self, file: &mut File) -> io::Result<()>;
}

/// The real disk: the file's own calls.
struct TheDisk;

impl Disk for TheDisk {
    fn write_all(&mut self, file: &mut File, bytes: &[u8]) -> io::Result<()> {
        file.write_all(bytes)
    }

    fn sync_all(&mut self, file: &mut File) -> io::Result<()> {
        file.sync_all()
    }
}

/// [`write_atomically`] on `disk`: creates a temporary file beside `path`, writes and syncs `bytes`,
/// and renames it over `path`; removes it if anything fails.
fn write_through(disk: &mut impl Disk, path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    let fail = |error| ExportError::Write {
        path: path.to_owned(),
        error,
    };
    let mut temp = TempFile::beside(path).map_err(fail)?;
    disk.write_all(&mut temp.file, bytes).map_err(fail)?;
    disk.sync_all(&mut temp.file).map_err(fail)?;
    fs::rename(&temp.path, path).map_err(fail)?;
    temp.renamed = true;
    // Make the rename itself durable. The data is already safe and in place, and some file
    // systems cannot sync a directory, so a failure here is not worth failing the export for.
    let _ = File::open(directory_of(path)).and_then(|dir| dir.sync_all());
    Ok(())
}

/// The directory `path` is in; `.` for a bare file name.
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// A newly created temporary file, removed when dropped unless it was renamed into place.
struct TempFile {
    path: PathBuf,
    file: File,
    renamed: bool,
}

impl TempFile {
    /// Creates `.<name>.<pid>.<n>.tmp` in the directory of `target`: hidden, unique within this
    /// process by `n` and across processes by the pid, and never an existing file (`create_new`).
    fn beside(target: &Path) -> io::Result<TempFile> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = target.file_name().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file")
        })?;
        let mut temp_name = OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(
            ".{}.{}.tmp",
            process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let path = directory_of(target).join(temp_name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(TempFile {
            path,
            file,
            renamed: false,
        })
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.renamed {
            // Best effort: the error being returned is the one that matters.
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// The largest JSON report read back: reports spanprof writes stay far below it (timelines are
/// bounded per run), and parsing one costs a small multiple of its size.
pub const MAX_REPORT_BYTES: u64 = 64 << 20;

/// The bytes of `path`, refused past `max` before more than `max` bytes are read (so a huge file
/// costs at most `max`), and refused at once unless it is a regular file (a FIFO would block the
/// open, a device such as /dev/zero never end), with an error that says so (`crate::files`).
pub fn read_bounded(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    crate::files::read_regular(path, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::os::unix::fs::PermissionsExt;

    use tempfile::TempDir;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn bounded_reads_stop_at_their_bound() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("r.json");
        fs::write(&path, vec![b'x'; 3 << 20])?;
        assert_eq!(read_bounded(&path, 3 << 20)?.len(), 3 << 20);
        let err = read_bounded(&path, 2 << 20).expect_err("past the bound");
        assert!(err.to_string().contains("larger than 2 MiB"), "{err}");
        let err = read_bounded(Path::new("/dev/zero"), 1 << 20).expect_err("endless");
        assert_eq!(
            err.kind(),
            io::ErrorKind::InvalidInput,
            "refused unread: {err}"
        );
        Ok(())
    }

    /// The names of the files in `dir`, sorted.
    fn listing(dir: &Path) -> io::Result<Vec<String>> {
        let mut names = fs::read_dir(dir)?
            .map(|entry| Ok(entry?.file_name().to_string_lossy().into_owned()))
            .collect::<io::Result<Vec<_>>>()?;
        names.sort();
        Ok(names)
    }

    #[test]
    fn writes_and_replaces_leaving_no_temporary_file() -> TestResult {
        let dir = TempDir::new()?;
        let path = dir.path().join("report.csv");
        write_atomically(&path, b"first")?;
        assert_eq!(fs::read(&path)?, b"first");
        write_atomically(&path, b"second, longer")?;
        assert_eq!(fs::read(&path)?, b"second, longer");
        assert_eq!(listing(dir.path())?, ["report.csv"]);
        Ok(())
    }

    #[test]
    fn a_missing_directory_is_a_clear_error() -> TestResult {
        let dir = TempDir::new()?;
        let path = dir.path().join("missing").join("report.csv");
        let error = write_atomically(&path, b"x").err().map(|e| e.to_string());
        let expected = format!("cannot write {}: No such file or directory", path.display());
        assert_eq!(error, Some(expected));
        assert!(listing(dir.path())?.is_empty());
        Ok(())
    }

    #[test]
    fn a_read_only_directory_is_a_clear_error() -> TestResult {
        let dir = TempDir::new()?;
        let locked = dir.path().join("locked");
        fs::create_dir(&locked)?;
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o555))?;
        // Root (as in some CI containers) writes into read-only directories anyway: if a probe
        // file can be created, permissions do not apply here and there is nothing to assert.
        let probe = locked.join("probe");
        let permissions_apply = File::create(&probe).is_err();
        let _ = fs::remove_file(&probe);
        if permissions_apply {
            let path = locked.join("report.csv");
            let error = write_atomically(&path, b"x").err().map(|e| e.to_string());
            let expected = format!("cannot write {}: Permission denied", path.display());
            assert_eq!(error, Some(expected));
            assert!(listing(&locked)?.is_empty());
        } else {
            eprintln!("running as root: read-only directory permissions not checked");
        }
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755))?;
        Ok(())
    }

    /// Linux's ENOSPC ("No space left on device"); the tests check it is `StorageFull`.
    const ENOSPC: i32 = 28;

    /// Where a [`FullDisk`] runs out of space.
    #[derive(Debug, Clone, Copy)]
    enum FillsAt {
        /// The write stores a few bytes, then fails.
        Write,
        /// The write succeeds, the fsync fails (as with delayed allocation or a network disk).
        Sync,
    }

    /// A disk that fills up at one step; the file's own calls otherwise.
    struct FullDisk(FillsAt);

    impl Disk for FullDisk {
        fn write_all(&mut self, file: &mut File, bytes: &[u8]) -> io::Result<()> {
            match self.0 {
                FillsAt::Write => {
                    file.write_all(&bytes[..bytes.len() / 2])?;
                    Err(io::Error::from_raw_os_error(ENOSPC))
                }
                FillsAt::Sync => file.write_all(bytes),
            }
        }

        fn sync_all(&mut self, file: &mut File) -> io::Result<()> {
            match self.0 {
                FillsAt::Write => file.sync_all(),
                FillsAt::Sync => Err(io::Error::from_raw_os_error(ENOSPC)),
            }
        }
    }

    /// `write_atomically`'s own path on a disk that fills at `step`: the error names the file and
    /// the reason, the old file is untouched and no temporary file is left.
    fn assert_full_disk_fails_cleanly(step: FillsAt) -> TestResult {
        assert_eq!(
            io::Error::from_raw_os_error(ENOSPC).kind(),
            io::ErrorKind::StorageFull
        );
        let dir = TempDir::new()?;
        let path = dir.path().join("report.csv");
        fs::write(&path, "old")?;
        let result = write_through(&mut FullDisk(step), &path, b"new, and longer");
        let error = result.err().map(|e| e.to_string());
        let expected = format!("cannot write {}: No space left on device", path.display());
        assert_eq!(error, Some(expected), "{step:?}");
        assert_eq!(fs::read(&path)?, b"old", "{step:?}");
        assert_eq!(listing(dir.path())?, ["report.csv"], "{step:?}");
        Ok(())
    }

    #[test]
    fn a_full_disk_is_a_clear_error_and_leaves_the_old_file() -> TestResult {
        assert_full_disk_fails_cleanly(FillsAt::Write)
    }

    #[test]
    fn a_disk_that_fills_at_the_fsync_is_a_clear_error_and_leaves_the_old_file() -> TestResult {
        assert_full_disk_fails_cleanly(FillsAt::Sync)
    }

    #[test]
    fn a_directory_as_target_is_an_error() -> TestResult {
        let dir = TempDir::new()?;
        let target = dir.path().join("report.csv");
        fs::create_dir(&target)?;
        let error = write_atomically(&target, b"x").err().map(|e| e.to_string());
        assert_eq!(
            error,
            Some(format!("cannot write {}: Is a directory", target.display()))
        );
        assert_eq!(listing(dir.path())?, ["report.csv"]);
        Ok(())
    }

    #[test]
    fn a_path_without_a_file_name_is_an_error() {
        let error = write_atomically(Path::new("/"), b"x")
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some("cannot write /: the path does not name a file")
        );
    }
}

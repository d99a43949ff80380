//! Opening the files a user names (reports, baselines, workloads, plans, certificates, key files,
//! recorded streams) without ever blocking on one: `open(2)` of a FIFO with no writer waits for a
//! writer forever, so every such file is opened with `O_NONBLOCK` and its type looked at first.
//! A file read whole must be a regular file ([`open_regular`]); a recorded stream may be a FIFO or
//! a pipe, read as it comes, and one without a writer reads as empty ([`open_stream`]).

use std::fs::{File, FileType};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::time::Duration;

/// How long a read of a FIFO waits before looking again while its writer has sent nothing.
const FIFO_POLL: Duration = Duration::from_millis(5);

/// What a file is, in words, when it is not a regular file.
pub fn describe(kind: FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Opens `path` without blocking, whatever it is.
fn open_nonblocking(path: &Path) -> io::Result<(File, FileType)> {
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    Ok((file, kind))
}

/// Opens `path` to be read whole: refused (an `InvalidInput` error saying what it is) unless it is
/// a regular file, so a FIFO or a device never blocks nor feeds a reader without end.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let (file, kind) = open_nonblocking(path)?;
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a regular file",
                path.display(),
                describe(kind)
            ),
        ));
    }
    // O_NONBLOCK means nothing to a regular file's reads.
    Ok(file)
}

/// Opens `path` to be read as it comes: a regular file, or a FIFO (or pipe), whose reads wait for
/// its writer's bytes and end when it has none (never connected, or gone). Anything else is
/// refused as [`open_regular`] refuses it.
pub fn open_stream(path: &Path) -> io::Result<Box<dyn Read + Send>> {
    let (file, kind) = open_nonblocking(path)?;
    if kind.is_fifo() {
        return Ok(Box::new(Fifo(file)));
    }
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is {}, not a regular file or a FIFO",
                path.display(),
                describe(kind)
            ),
        ));
    }
    Ok(Box::new(file))
}

/// A FIFO opened without blocking: a read that would block waits a moment and looks again (its
/// writer is there, with nothing yet); a read of 0 bytes is its end (no writer, or gone).
struct Fifo(File);

impl Read for Fifo {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.0.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(FIFO_POLL),
                other => return other,
            }
        }
    }
}

/// The bytes of `path`, a regular file, refused past `max` before more than `max` bytes are read.
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path)?.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "larger than {} MiB, the most spanprof reads from such a file",
                max >> 20
            ),
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        path
    }

    #[test]
    fn a_fifo_or_a_device_is_refused_at_once_where_a_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = fifo(dir.path());
        let started = std::time::Instant::now();
        let err = read_regular(&path, 1 << 20).expect_err("a FIFO");
        assert!(
            err.to_string().ends_with("is a FIFO, not a regular file"),
            "{err}"
        );
        let err = read_regular(Path::new("/dev/zero"), 1 << 20).expect_err("a device");
        assert!(err.to_string().contains("a character device"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(1));
        let file = dir.path().join("r.json");
        std::fs::write(&file, b"[]").expect("writes");
        assert_eq!(read_regular(&file, 10).expect("read"), b"[]");
    }

    #[test]
    fn a_stream_from_a_fifo_is_read_as_it_comes_and_one_without_a_writer_is_empty() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = fifo(dir.path());
        let mut alone = Vec::new();
        open_stream(&path)
            .expect("opens at once")
            .read_to_end(&mut alone)
            .expect("reads");
        assert!(alone.is_empty(), "no writer: empty, not blocked");
        let mut reader = open_stream(&path).expect("opens");
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut w = File::options().write(true).open(&path).expect("a writer");
                std::thread::sleep(Duration::from_millis(30));
                std::io::Write::write_all(&mut w, b"frames").expect("writes");
            })
        };
        let mut got = Vec::new();
        // The writer connects after the open: the first reads find nothing yet or its bytes.
        while got.len() < 6 {
            let mut buf = [0u8; 16];
            match reader.read(&mut buf).expect("reads") {
                0 if writer.is_finished() => break,
                0 => std::thread::sleep(Duration::from_millis(5)),
                n => got.extend_from_slice(&buf[..n]),
            }
        }
        writer.join().expect("joins");
        assert_eq!(got, b"frames");
    }
}

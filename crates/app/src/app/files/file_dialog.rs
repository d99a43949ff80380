//! spanprof's own file dialog, drawn in the window: the one that always works, whatever the
//! desktop (no XDG portal under a plain X server, Xvfb or WSL; a portal that fails or hangs).
//!
//! A modal over the window: the folder and its entries, a file name field (for a save, the
//! proposed name with its stem selected), Enter to choose and Escape to cancel. The folder is
//! listed on a named thread of its own (a slow or network folder never holds up a frame); a
//! folder that cannot be listed says why, and the path can still be typed. Choosing only names a
//! path: opening or writing the file is the caller's job, off the UI thread as well.

use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

use crate::app::theme;

/// Entries a listing keeps, at most (the list is virtualised; this bounds its memory).
const MAX_ENTRIES: usize = 10_000;

/// One entry of a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The file or folder name.
    pub name: String,
    /// Whether it is a folder (a link to one counts).
    pub is_dir: bool,
}

/// What listing a folder gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// The folder listed: the one asked for, or the first of the fallbacks that could be.
    pub folder: PathBuf,
    /// Folders first, then files, each by name; hidden entries left out; at most [`MAX_ENTRIES`].
    pub entries: Vec<Entry>,
    /// Entries in the folder beyond those kept.
    pub more: usize,
    /// Why the folder asked for could not be listed, when it could not.
    pub problem: Option<String>,
}

/// Lists the first of `folders` that can be listed (the asked-for folder, then fallbacks such as
/// the home directory). Reads the file system: call it off the UI thread.
pub fn list_folder(folders: &[PathBuf]) -> Listing {
    let mut problem = None;
    for folder in folders {
        match std::fs::read_dir(folder) {
            Ok(read) => {
                let mut entries: Vec<Entry> = read
                    .filter_map(Result::ok)
                    .filter_map(|e| {
                        let name = e.file_name().to_string_lossy().into_owned();
                        // `metadata` follows links, so a link to a folder opens as one.
                        let is_dir = std::fs::metadata(e.path()).is_ok_and(|m| m.is_dir());
                        (!name.starts_with('.')).then_some(Entry { name, is_dir })
                    })
                    .collect();
                entries.sort_by(|a, b| {
                    b.is_dir
                        .cmp(&a.is_dir)
                        .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
                });
                let more = entries.len().saturating_sub(MAX_ENTRIES);
                entries.truncate(MAX_ENTRIES);
                return Listing {
                    folder: folder.clone(),
                    entries,
                    more,
                    problem,
                };
            }
            Err(e) => {
                problem.get_or_insert_with(|| format!("cannot list {}: {e}", folder.display()));
            }
        }
    }
    Listing {
        folder: folders.first().cloned().unwrap_or_default(),
        entries: Vec::new(),
        more: 0,
        problem,
    }
}

/// The user's home directory (`$HOME`, or `%USERPROFILE%`), else the root.
pub fn home_dir() -> PathBuf {
    ["HOME", "USERPROFILE"]
        .into_iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty())
        .map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// The path `typed` names from `folder`: absolute as typed, `~` for the home directory, else
/// inside `folder`. A save without an extension gets `extension`.
pub fn resolve(folder: &Path, typed: &str, extension: Option<&str>) -> Option<PathBuf> {
    let typed = typed.trim();
    if typed.is_empty() {
        return None;
    }
    let path = if typed == "~" {
        home_dir()
    } else if let Some(rest) = typed.strip_prefix("~/") {
        home_dir().join(rest)
    } else {
        folder.join(typed)
    };
    match extension {
        Some(ext) if path.extension().is_none() && !typed.ends_with('/') => {
            Some(path.with_extension(ext))
        }
        _ => Some(path),
    }
}

/// How a dialog ended.
#[derive(Debug, Clone, PartialEq)]
pub enum DialogOutcome {
    /// The user chose this path.
    Chosen(PathBuf),
    /// The user cancelled.
    Cancelled,
}

/// Whether the dialog names a file to write or one to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Save,
    Open,
}

enum ListingState {
    Loading(mpsc::Receiver<Listing>),
    Ready(Listing),
}

/// The in-window dialog. Shown each frame by [`FileDialog::show`] until it returns an outcome.
pub struct FileDialog {
    title: String,
    mode: Mode,
    /// The extension a save gets when the typed name has none.
    extension: Option<String>,
    folder: PathBuf,
    name: String,
    listing: ListingState,
    /// A save over this existing file waits for a second Enter (or Replace).
    replace: Option<PathBuf>,
    /// What went wrong with the last attempt to choose, shown in the dialog.
    problem: Option<String>,
    /// Problems the owner has not taken yet (to put them in the log as well).
    unreported: Vec<String>,
    /// The first frame focuses the name and selects its stem.
    first_frame: bool,
    notify: Arc<dyn Fn() + Send + Sync>,
}

impl std::fmt::Debug for FileDialog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileDialog")
            .field("title", &self.title)
            .field("mode", &self.mode)
            .field("folder", &self.folder)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl FileDialog {
    /// A save dialog in `folder` proposing `file_name`; `notify` asks for a repaint when a
    /// listing is ready.
    pub fn save(
        title: impl Into<String>,
        folder: PathBuf,
        file_name: String,
        notify: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        let extension = Path::new(&file_name)
            .extension()
            .map(|e| e.to_string_lossy().into_owned());
        Self::new(
            title.into(),
            Mode::Save,
            extension,
            folder,
            file_name,
            notify,
        )
    }

    /// An open dialog in `folder`.
    pub fn open(
        title: impl Into<String>,
        folder: PathBuf,
        notify: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        Self::new(
            title.into(),
            Mode::Open,
            None,
            folder,
            String::new(),
            notify,
        )
    }

    fn new(
        title: String,
        mode: Mode,
        extension: Option<String>,
        folder: PathBuf,
        name: String,
        notify: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        let mut dialog = FileDialog {
            title,
            mode,
            extension,
            folder: folder.clone(),
            name,
            listing: ListingState::Ready(Listing {
                folder: folder.clone(),
                entries: Vec::new(),
                more: 0,
                problem: None,
            }),
            replace: None,
            problem: None,
            unreported: Vec::new(),
            first_frame: true,
            notify,
        };
        dialog.go_to(folder);
        dialog
    }

    /// The folder shown.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// The file name typed (or proposed).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Problems met since the last call (a folder that could not be listed, a name that names
    /// nothing), for the log; each is also shown in the dialog.
    pub fn take_problems(&mut self) -> Vec<String> {
        std::mem::take(&mut self.unreported)
    }

    fn go_to(&mut self, folder: PathBuf) {
        let (tx, rx) = mpsc::channel();
        let notify = Arc::clone(&self.notify);
        let mut folders = vec![folder.clone()];
        let home = home_dir();
        if home != folder {
            folders.push(home);
        }
        self.folder = folder;
        self.replace = None;
        let spawned = std::thread::Builder::new()
            .name("spanprof-list-folder".into())
            .spawn(move || {
                let _ = tx.send(list_folder(&folders));
                notify();
            });
        match spawned {
            Ok(_) => self.listing = ListingState::Loading(rx),
            Err(e) => self.report(format!("cannot list the folder: {e}")),
        }
    }

    fn report(&mut self, problem: String) {
        self.unreported.push(problem.clone());
        self.problem = Some(problem);
    }

    fn poll_listing(&mut self) {
        let ListingState::Loading(rx) = &self.listing else {
            return;
        };
        match rx.try_recv() {
            Ok(listing) => {
                self.folder = listing.folder.clone();
                if let Some(problem) = &listing.problem {
                    self.report(problem.clone());
                }
                self.listing = ListingState::Ready(listing);
            }
            Err(mpsc::TryRecvError::Empty) => {}
            Err(mpsc::TryRecvError::Disconnected) => {
                let folder = self.folder.clone();
                self.report(format!("cannot list {}", folder.display()));
                self.listing = ListingState::Ready(Listing {
                    folder,
                    entries: Vec::new(),
                    more: 0,
                    problem: None,
                });
            }
        }
    }

    fn entries(&self) -> &[Entry] {
        match &self.listing {
            ListingState::Ready(listing) => &listing.entries,
            ListingState::Loading(_) => &[],
        }
    }

    /// What Enter (or Save/Open) does with the name typed: a folder opens, a file is chosen (a
    /// save over a file the folder holds asks first).
    fn confirm(&mut self) -> Option<DialogOutcome> {
        let typed = self.name.trim().to_owned();
        if typed == ".." {
            self.up();
            return None;
        }
        let is_listed_dir = self.entries().iter().any(|e| e.is_dir && e.name == typed);
        if is_listed_dir || typed.ends_with('/') || typed == "~" {
            if let Some(folder) = resolve(&self.folder, &typed, None) {
                self.name.clear();
                self.go_to(folder);
            }
            return None;
        }
        let extension = match self.mode {
            Mode::Save => self.extension.as_deref(),
            Mode::Open => None,
        };
        let Some(path) = resolve(&self.folder, &typed, extension) else {
            let what = match self.mode {
                Mode::Save => "type a file name to save to",
                Mode::Open => "choose a file to open",
            };
            self.problem = Some(what.to_owned());
            return None;
        };
        if self.mode == Mode::Save && self.replace.as_ref() != Some(&path) && self.holds_file(&path)
        {
            self.replace = Some(path);
            return None;
        }
        Some(DialogOutcome::Chosen(path))
    }

    /// Whether the listed folder holds a file at `path`.
    fn holds_file(&self, path: &Path) -> bool {
        path.parent() == Some(self.folder.as_path())
            && path.file_name().is_some_and(|name| {
                self.entries()
                    .iter()
                    .any(|e| !e.is_dir && std::ffi::OsStr::new(&e.name) == name)
            })
    }

    fn up(&mut self) {
        if let Some(parent) = self.folder.parent().map(Path::to_path_buf) {
            self.go_to(parent);
        }
    }

    /// Draws the dialog over the window; returns how it ended once it has.
    pub fn show(&mut self, ctx: &egui::Context) -> Option<DialogOutcome> {
        self.poll_listing();
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Escape)) {
            return Some(DialogOutcome::Cancelled);
        }
        let modal = egui::Modal::new(egui::Id::unique("spanprof-file-dialog")).show(ctx, |ui| {
            ui.set_width(ui.ctx().content_rect().width().clamp(320.0, 640.0) - 40.0);
            self.contents(ui)
        });
        let (outcome, name_field) = modal.inner;
        if outcome.is_some() {
            return outcome;
        }
        // Enter chooses wherever the focus is; read after the name field took this frame's text.
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Enter)) {
            let outcome = self.confirm();
            if outcome.is_none() {
                // The field gave up its focus on Enter; the dialog is still open, so give it back.
                ctx.memory_mut(|m| m.request_focus(name_field));
            }
            return outcome;
        }
        None
    }

    /// The dialog's widgets; returns how it ended (a button) and the name field's id.
    fn contents(&mut self, ui: &mut egui::Ui) -> (Option<DialogOutcome>, egui::Id) {
        let mut outcome = None;
        ui.heading(&self.title);
        ui.add_space(4.0);
        ui.horizontal(|ui| {
            if ui.button("Up").on_hover_text("The parent folder").clicked() {
                self.up();
            }
            if ui.button("Home").clicked() {
                self.go_to(home_dir());
            }
            ui.label(egui::RichText::new(self.folder.display().to_string()).monospace());
        });
        self.entries_ui(ui);
        let name_label = ui.label("File name (or a path; Enter to choose, Escape to cancel)");
        let edit = egui::TextEdit::singleline(&mut self.name)
            .id_salt("file-dialog-name")
            .desired_width(f32::INFINITY);
        let response = ui.add(edit).labelled_by(name_label.id);
        if response.changed() {
            self.replace = None;
            self.problem = None;
        }
        if self.first_frame {
            self.first_frame = false;
            select_stem(ui.ctx(), response.id, &self.name);
            response.request_focus();
        }
        if let Some(path) = &self.replace {
            ui.colored_label(
                theme::WARN,
                format!(
                    "{} already exists: press Enter or Replace to overwrite it",
                    path.display()
                ),
            );
        }
        if let Some(problem) = &self.problem {
            ui.colored_label(theme::ERROR, problem);
        }
        ui.add_space(4.0);
        ui.horizontal(|ui| {
            let verb = match (self.mode, self.replace.is_some()) {
                (Mode::Save, false) => "Save",
                (Mode::Save, true) => "Replace",
                (Mode::Open, _) => "Open",
            };
            if ui.button(egui::RichText::new(verb).strong()).clicked() {
                outcome = self.confirm();
            }
            if ui.button("Cancel").clicked() {
                outcome = Some(DialogOutcome::Cancelled);
            }
        });
        (outcome, response.id)
    }

    fn entries_ui(&mut self, ui: &mut egui::Ui) {
        let mut clicked: Option<Entry> = None;
        let row_height = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.set_min_size(egui::vec2(ui.available_width(), 240.0));
            match &self.listing {
                ListingState::Loading(_) => {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.label("listing the folder…");
                    });
                }
                ListingState::Ready(listing) if listing.entries.is_empty() => {
                    ui.weak(listing.problem.as_deref().unwrap_or("(empty folder)"));
                }
                ListingState::Ready(listing) => {
                    egui::ScrollArea::vertical()
                        .id_salt("file-dialog-entries")
                        .max_height(240.0)
                        .auto_shrink([false, true])
                        .show_rows(ui, row_height, listing.entries.len(), |ui, rows| {
                            for entry in &listing.entries[rows] {
                                let text = if entry.is_dir {
                                    format!("{}/", entry.name)
                                } else {
                                    entry.name.clone()
                                };
                                let selected = !entry.is_dir && entry.name == self.name;
                                if ui.selectable_label(selected, text).clicked() {
                                    clicked = Some(entry.clone());
                                }
                            }
                        });
                    if listing.more > 0 {
                        ui.weak(format!("… and {} more not listed", listing.more));
                    }
                }
            }
        });
        match clicked {
            Some(Entry { name, is_dir: true }) => {
                let folder = self.folder.join(name);
                self.go_to(folder);
            }
            Some(Entry { name, .. }) => {
                self.name = name;
                self.replace = None;
                self.problem = None;
            }
            None => {}
        }
    }
}

/// Selects the part of `name` before its extension in the text field `id`, so typing replaces
/// the stem and keeps the extension.
fn select_stem(ctx: &egui::Context, id: egui::Id, name: &str) {
    let stem = Path::new(name)
        .file_stem()
        .map_or(0, |s| s.to_string_lossy().chars().count());
    let mut state = egui::text_edit::TextEditState::load(ctx, id).unwrap_or_default();
    state
        .cursor
        .set_char_range(Some(egui::text::CCursorRange::two(
            egui::text::CCursor::new(0),
            egui::text::CCursor::new(stem),
        )));
    state.store(ctx, id);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_name_resolves_in_the_folder_and_a_save_gets_its_extension() {
        let folder = Path::new("/data/runs");
        assert_eq!(
            resolve(folder, "a.csv", Some("csv")),
            Some(PathBuf::from("/data/runs/a.csv"))
        );
        assert_eq!(
            resolve(folder, " today ", Some("csv")),
            Some(PathBuf::from("/data/runs/today.csv"))
        );
        assert_eq!(
            resolve(folder, "/tmp/x.json", Some("csv")),
            Some(PathBuf::from("/tmp/x.json"))
        );
        assert_eq!(
            resolve(folder, "sub/x", None),
            Some(PathBuf::from("/data/runs/sub/x"))
        );
        assert_eq!(resolve(folder, "  ", Some("csv")), None);
        assert_eq!(
            resolve(folder, "~/r.md", Some("md")),
            Some(home_dir().join("r.md"))
        );
    }

    #[test]
    fn a_listing_puts_folders_first_hides_dot_files_and_falls_back()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("b.csv"), "x")?;
        std::fs::write(dir.path().join("A.json"), "x")?;
        std::fs::write(dir.path().join(".hidden"), "x")?;
        std::fs::create_dir(dir.path().join("z-folder"))?;
        let listing = list_folder(&[dir.path().to_path_buf()]);
        let names: Vec<(&str, bool)> = listing
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.is_dir))
            .collect();
        assert_eq!(
            names,
            [("z-folder", true), ("A.json", false), ("b.csv", false)]
        );
        assert_eq!(listing.problem, None);

        let gone = dir.path().join("gone");
        let listing = list_folder(&[gone.clone(), dir.path().to_path_buf()]);
        assert_eq!(listing.folder, dir.path());
        let problem = listing.problem.unwrap_or_default();
        assert!(
            problem.starts_with(&format!("cannot list {}", gone.display())),
            "{problem}"
        );
        Ok(())
    }
}

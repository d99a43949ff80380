//! What each request of a load run draws (`load --param NAME=DIST`, `--mix`): request `n` of the
//! run (numbered as requests start, across the steps) takes the drawer's `n`-th draw, so a run's
//! keys are fixed by its seed whatever the interleaving; the warm-up draws apart
//! ([`crate::load::draw::WARM_UP`]). A transaction binds its draw in every attempt. The
//! parameters' text (`NAME=DIST`, or a typed constant `NAME:TYPE=VALUE`) is read here for the
//! command line and the window alike ([`LoadParam::parse`], [`LoadParams`]).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::client::{Bound, Param, ParamError};
use crate::load::{DrawError, Drawer, Draws, ParamDraw};
use crate::script::Script;

/// One parameter of a load run: a constant of any type (`NAME:TYPE=VALUE`, as a profile binds
/// it) or a draw (`NAME=DIST`).
#[derive(Debug, Clone, PartialEq)]
pub enum LoadParam {
    /// `NAME:TYPE=VALUE`, bound as a profile binds it.
    Typed(Param),
    /// `NAME=DIST`.
    Drawn(ParamDraw),
}

/// Why a load run's parameters cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoadParamError {
    /// A typed constant that is not one.
    #[error(transparent)]
    Typed(#[from] ParamError),
    /// A draw that is not one.
    #[error(transparent)]
    Drawn(#[from] DrawError),
    /// One name drawn twice.
    #[error("--param {0} is given twice")]
    Twice(String),
}

impl LoadParam {
    /// Reads `NAME:TYPE=VALUE` (a `:` before the `=`) or `NAME=DIST`.
    pub fn parse(text: &str) -> Result<LoadParam, LoadParamError> {
        let typed = text
            .split_once('=')
            .is_some_and(|(left, _)| left.contains(':'));
        Ok(if typed {
            LoadParam::Typed(Param::parse(text)?)
        } else {
            LoadParam::Drawn(ParamDraw::parse(text)?)
        })
    }
}

/// A load run's parameters, split: the constants typed, and the draws (each name drawn once).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadParams {
    /// The constants given as `NAME:TYPE=VALUE`.
    pub typed: Vec<Param>,
    /// The draws, in the order given.
    pub drawn: Vec<ParamDraw>,
}

impl LoadParams {
    /// `params` split; a name drawn twice refused.
    pub fn of(params: &[LoadParam]) -> Result<LoadParams, LoadParamError> {
        let mut split = LoadParams::default();
        for p in params {
            match p {
                LoadParam::Typed(p) => split.typed.push(p.clone()),
                LoadParam::Drawn(p) => {
                    if split
                        .drawn
                        .iter()
                        .any(|q| q.name.eq_ignore_ascii_case(&p.name))
                    {
                        return Err(LoadParamError::Twice(p.name.clone()));
                    }
                    split.drawn.push(p.clone());
                }
            }
        }
        Ok(split)
    }

    /// The parameters of `text`, one a line or separated by commas (`id=zipf:1..100,
    /// kind=string:a`); a piece that does not start with a name and `=` or `:` belongs to the one
    /// before it (`name=string:a,b` is one string), and blank pieces are none.
    pub fn parse_list(text: &str) -> Result<LoadParams, LoadParamError> {
        let mut pieces: Vec<String> = Vec::new();
        for line in text.lines() {
            for piece in line.split(',') {
                match pieces.last_mut() {
                    Some(last) if !last.is_empty() && !starts_a_param(piece) => {
                        last.push(',');
                        last.push_str(piece);
                    }
                    _ => pieces.push(piece.to_owned()),
                }
            }
            // A line's end ends its last piece: the next line starts one of its own.
            pieces.push(String::new());
        }
        let params = pieces
            .iter()
            .map(|p| p.trim())
            .filter(|p| !p.is_empty())
            .map(LoadParam::parse)
            .collect::<Result<Vec<_>, _>>()?;
        LoadParams::of(&params)
    }
}

/// Whether `piece` starts a parameter (`NAME=`, `@NAME=` or `NAME:`), or is blank.
fn starts_a_param(piece: &str) -> bool {
    let piece = piece.trim_start().trim_start_matches('@');
    let name = piece
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(piece, |end| &piece[..end]);
    piece.trim().is_empty() || (!name.is_empty() && piece[name.len()..].starts_with(['=', ':']))
}

/// One script of a mix, named by its file's stem.
#[derive(Debug, Clone, PartialEq)]
pub struct MixScript {
    /// Its name.
    pub name: String,
    /// Its steps.
    pub script: Script,
}

/// What a load run's requests draw: the seed, the parameters and the mix's weights (`None`: each
/// request binds nothing and runs the variant's one script), and the mix's scripts in its order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadDraws {
    /// The seed, the parameters and the mix, as the report keeps them.
    pub draws: Option<Draws>,
    /// A read-write run's mix of scripts (empty: the variant's script).
    pub scripts: Vec<MixScript>,
}

/// The run's drawer and the number of the next request.
pub(super) struct RequestDraws {
    drawer: Drawer,
    names: Vec<String>,
    next: AtomicU64,
}

/// One request's draw: its script's place in the mix and its parameters.
pub(super) struct RequestDraw {
    pub(super) script: usize,
    pub(super) bound: Vec<Bound>,
}

impl RequestDraws {
    /// Draws for `draws`, the first request numbered 0.
    pub(super) fn new(draws: &Draws) -> Self {
        RequestDraws {
            drawer: Drawer::new(draws),
            names: draws.params.iter().map(|p| p.name.clone()).collect(),
            next: AtomicU64::new(0),
        }
    }

    /// The next request's draw.
    pub(super) fn next(&self) -> RequestDraw {
        self.of(self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Request `n`'s draw.
    pub(super) fn of(&self, n: u64) -> RequestDraw {
        let drawn = self.drawer.draw(n);
        RequestDraw {
            script: drawn.script,
            bound: self
                .names
                .iter()
                .zip(drawn.values)
                .map(|(name, value)| Bound::drawn(name.clone(), value))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Dist;

    #[test]
    fn a_list_splits_at_commas_and_lines_and_a_string_keeps_its_commas() {
        let p =
            LoadParams::parse_list("id=zipf:1..100, name=string:a,b\n\n n:INT64=5").expect("valid");
        assert_eq!(p.drawn.len(), 2);
        assert_eq!(p.drawn[0].name, "id");
        assert_eq!(
            p.drawn[1].dist,
            Dist::String {
                value: "a,b".into()
            }
        );
        assert_eq!(p.typed.len(), 1);
        assert_eq!(
            LoadParams::parse_list("  ").expect("none"),
            LoadParams::default()
        );
    }

    #[test]
    fn a_bad_draw_or_a_name_twice_is_said() {
        for (bad, says) in [
            ("id=zipf:100..1", "ends below its start"),
            ("id=Alice", "unknown distribution"),
            ("id=uniform:1..5,ID=uniform:1..9", "given twice"),
            ("n:WHAT=1", "unknown type"),
        ] {
            let e = LoadParams::parse_list(bad).expect_err(bad).to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}

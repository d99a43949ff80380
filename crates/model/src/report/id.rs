//! [`RunId`]: what names a run in this process, from the press of Run to the run list, the
//! views' selections and the history save; one type, handed out by the app's run list.

/// A run's id within this process's life: the run in flight takes one when it starts and its
/// first report keeps it when it ends, so what the views picked or opened in it stays theirs.
/// Never reused, never stored in a file; the history's own id of a saved run (a row in its
/// database) is another thing (`RunSource::History` in the app holds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(u64);

impl RunId {
    /// The first id handed out.
    pub const FIRST: RunId = RunId(1);

    /// The id handed out after this one.
    pub fn next(self) -> RunId {
        RunId(self.0.saturating_add(1))
    }

    /// Its number, as a person reads it.
    pub fn number(self) -> u64 {
        self.0
    }
}

/// Its number alone (what a chart's series is told apart by: `wide (3)`).
impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_each_other_and_never_wrap() {
        assert_eq!(RunId::FIRST.next().number(), 2);
        assert!(RunId::FIRST < RunId::FIRST.next());
        assert_eq!(RunId(u64::MAX).next(), RunId(u64::MAX));
        assert_eq!(RunId::FIRST.to_string(), "1");
    }
}

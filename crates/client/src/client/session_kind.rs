//! The kinds of Spanner session: regular (one operation at a time, what a pool holds) and
//! multiplexed (any number of concurrent operations, the official clients' default for read-only
//! work). A profile asks for one; the server's answer says which it granted (the emulator grants a
//! regular session to a multiplexed request), and the report keeps both.

use crate::proto::google::spanner::v1 as pb;

pub use crate::kind::SessionKind;

/// The kind of session the server granted.
pub fn granted(session: &pb::Session) -> SessionKind {
    if session.multiplexed {
        SessionKind::Multiplexed
    } else {
        SessionKind::Regular
    }
}

/// The session template of a CreateSession asking for `kind` (none for a regular one, as every
/// client sends it).
pub fn template(kind: SessionKind) -> Option<pb::Session> {
    match kind {
        SessionKind::Regular => None,
        SessionKind::Multiplexed => Some(pb::Session {
            multiplexed: true,
            ..pb::Session::default()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_spelled_once_and_read_back_from_the_answer() {
        for kind in [SessionKind::Regular, SessionKind::Multiplexed] {
            assert_eq!(SessionKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(SessionKind::parse("pooled"), None);
        let asked = template(SessionKind::Multiplexed).expect("a template");
        assert!(asked.multiplexed);
        assert_eq!(granted(&asked), SessionKind::Multiplexed);
        assert_eq!(granted(&pb::Session::default()), SessionKind::Regular);
        assert_eq!(template(SessionKind::Regular), None);
    }
}

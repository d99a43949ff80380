//! The causes of an iteration's difference from the median one, in words a reader would say:
//! what made it slower or faster, and how much of the extra time the named causes account for.

use crate::analysis::causes::CauseKind;

/// The words for a cause, as a reader would say it: what made the iteration slower when `ms` is
/// above zero, what made it faster below (a first message that came earlier is not one that
/// "came later").
pub fn cause_words(kind: CauseKind, at_message: Option<u32>, ms: f64) -> String {
    let more = ms >= 0.0;
    let pick = |slower: &str, faster: &str| if more { slower } else { faster }.to_owned();
    match (kind, at_message) {
        (CauseKind::Server, Some(n)) if more => format!("the server stalled before message {n}"),
        (CauseKind::Server, _) => pick("the server worked longer", "the server worked less"),
        (CauseKind::StreamGap, Some(n)) if more => format!("a stall before message {n}"),
        (CauseKind::StreamGap, _) => pick(
            "longer waits between messages",
            "shorter waits between messages",
        ),
        (CauseKind::FirstByte, _) => pick(
            "the first message came later",
            "the first message came earlier",
        ),
        (CauseKind::Decode, _) => pick("more decode CPU", "less decode CPU"),
        (CauseKind::Descheduled, _) => pick(
            "the client's thread was off the CPU",
            "the client's thread was off the CPU less",
        ),
        (CauseKind::Resume, _) => pick("resumes", "fewer resumes"),
        (CauseKind::Connect, _) => pick("connecting took longer", "connecting took less"),
        (CauseKind::Tls, _) => pick(
            "the TLS handshake took longer",
            "the TLS handshake took less",
        ),
        (CauseKind::Token, _) => pick("fetching a token took longer", "fetching a token took less"),
        (CauseKind::Session, _) => pick(
            "creating a session took longer",
            "creating a session took less",
        ),
        (CauseKind::Other, _) => pick("other work, or untimed", "less other work, or untimed"),
    }
}

/// How much of an iteration's `extra_ms` (above zero) the causes named account for, in words:
/// a share up to 100%; past it, that the named causes overshoot and the ones below zero make up
/// the difference.
pub fn coverage_words(named_ms: f64, extra_ms: f64) -> String {
    let share = named_ms / extra_ms * 100.0;
    if share <= 100.5 {
        format!("The named causes cover {share:.0}% of the extra time.")
    } else {
        format!(
            "The named causes add up to {} for {} of extra time: the causes below zero took back \
             the difference.",
            crate::text::ms(named_ms),
            crate::text::ms(extra_ms)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_said_in_words_with_the_message_of_a_stall() {
        assert_eq!(
            cause_words(CauseKind::StreamGap, Some(4), 12.0),
            "a stall before message 4"
        );
        assert_eq!(
            cause_words(CauseKind::Descheduled, None, 3.0),
            "the client's thread was off the CPU"
        );
        // The sign and the words agree.
        assert_eq!(
            cause_words(CauseKind::FirstByte, None, 17.03),
            "the first message came later"
        );
        assert_eq!(
            cause_words(CauseKind::FirstByte, None, -17.03),
            "the first message came earlier"
        );
        assert_eq!(
            cause_words(CauseKind::StreamGap, Some(4), -2.0),
            "shorter waits between messages"
        );
        assert_eq!(crate::text::capitalised("the server"), "The server");
    }

    #[test]
    fn the_causes_never_cover_more_than_all_of_the_extra_time() {
        assert_eq!(
            coverage_words(45.0, 50.0),
            "The named causes cover 90% of the extra time."
        );
        let over = coverage_words(75.0, 50.0);
        assert!(!over.contains('%'), "{over}");
        assert!(over.contains("took back the difference"), "{over}");
    }
}

//! The causes of an iteration's difference from the median one, in words a reader would say:
//! which part made it slower or faster, where, and how much of the extra time the named causes
//! account for.

use crate::analysis::causes::Location;
use crate::part::Part;

/// The words for a cause, as a reader would say it: what made the iteration slower when `ms` is
/// above zero, what made it faster below (a wait that shrank is not one that "grew"). A cause is
/// a part of the accounting, said with the part's label, and where it happened when that is known.
pub fn cause_words(kind: Part, location: Option<Location>, ms: f64) -> String {
    let more = ms >= 0.0;
    let pick = |slower: &str, faster: &str| if more { slower } else { faster }.to_owned();
    let said = match (kind, location) {
        (Part::Server, Some(at)) if more => return format!("the server stalled {}", at.words()),
        (Part::Network, Some(at)) if more => {
            return format!("a stall {} (network)", at.words());
        }
        (Part::Server, _) => pick("the server worked longer", "the server worked less"),
        (Part::Network, _) => pick(
            "longer waits on the network",
            "shorter waits on the network",
        ),
        (Part::WireDecode | Part::RowDecode, _) => {
            format!("{} {} CPU", pick("more", "less"), kind.label())
        }
        (Part::ClientWork, _) => pick(
            "more of the client's own work",
            "less of the client's own work",
        ),
        (Part::Descheduled, _) => pick(
            "the client's thread was off the CPU",
            "the client's thread was off the CPU less",
        ),
        (Part::Untimed, _) => pick("more untimed", "less untimed"),
        (Part::Backoff, _) => pick("backing off to resume", "less backing off"),
        _ => format!("{} {}", kind.label(), pick("took longer", "took less")),
    };
    match location {
        Some(at) if more => format!("{said}, {}", at.words()),
        _ => said,
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
        let at_4 = Some(Location::BeforeMessage(4));
        assert_eq!(
            cause_words(Part::Network, at_4, 12.0),
            "a stall before message 4 (network)"
        );
        assert_eq!(
            cause_words(Part::Server, at_4, 12.0),
            "the server stalled before message 4"
        );
        assert_eq!(
            cause_words(Part::Descheduled, None, 3.0),
            "the client's thread was off the CPU"
        );
        // The sign and the words agree.
        assert_eq!(
            cause_words(Part::Network, None, 17.03),
            "longer waits on the network"
        );
        assert_eq!(
            cause_words(Part::Network, at_4, -2.0),
            "shorter waits on the network"
        );
        assert_eq!(
            cause_words(Part::Untimed, Some(Location::AfterLastMessage), 2.0),
            "more untimed, after the last message"
        );
        assert_eq!(
            cause_words(Part::WireDecode, None, -1.0),
            "less wire decode CPU"
        );
        assert_eq!(
            cause_words(Part::Cold(crate::report::ColdStep::Session), None, 5.0),
            "session took longer"
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

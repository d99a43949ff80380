//! The recording room (`spanprof record`): the first variant's query run once, every message the
//! decoder consumed kept, after any resume, in the stream-file format, so that `spanprof decode`
//! reproduces its rows offline.

use crate::client::{Decoding, ResumePolicy};

use super::cold;
use super::events::{EngineError, Recording, RecordingError};
use super::spec::{ProfileSpec, SpecError};
use super::target::Target;

/// Records one execution of `spec`'s first variant on `target`.
pub(super) async fn record(target: Target, spec: ProfileSpec) -> Result<Recording, RecordingError> {
    spec.check().map_err(EngineError::from)?;
    let (sessions, queries) = cold::RunSessions::open(&target, &spec).await?;
    let query = queries
        .into_iter()
        .next()
        .ok_or(EngineError::Spec(SpecError::NoVariants))?;
    let mut file = Vec::new();
    let outcome = sessions
        .first()
        .execute(
            &query,
            ResumePolicy::default(),
            Decoding {
                recording: Some(&mut file),
                ..Decoding::new(spec.decoder, &mut |_, _| {})
            },
        )
        .await;
    sessions.close().await;
    Ok(Recording {
        file,
        timing: outcome?,
    })
}

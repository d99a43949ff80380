//! The session calls: CreateSession, BatchCreateSessions, GetSession and DeleteSession, over the
//! sessions the service keeps (`session_store.rs`).

use tonic::{Request, Response, Status};

use super::{LocalSpanner, caller};
use crate::proto::google::spanner::v1 as pb;

pub(super) async fn create(
    spanner: &LocalSpanner,
    request: Request<pb::CreateSessionRequest>,
) -> Result<Response<pb::Session>, Status> {
    let via = caller(&request);
    let r = request.into_inner();
    let knobs = spanner.knobs.get();
    spanner
        .sessions
        .create(
            &r.database,
            r.session.as_ref(),
            (spanner.unique(), via.as_ref()),
            &knobs,
        )
        .map(Response::new)
}

pub(super) async fn batch_create(
    spanner: &LocalSpanner,
    request: Request<pb::BatchCreateSessionsRequest>,
) -> Result<Response<pb::BatchCreateSessionsResponse>, Status> {
    let via = caller(&request);
    let r = request.into_inner();
    if r.session_count <= 0 {
        return Err(Status::invalid_argument("session_count must be positive"));
    }
    let knobs = spanner.knobs.get();
    let template = r.session_template.as_ref();
    if template.is_some_and(|t| t.multiplexed) {
        // As production: a multiplexed session comes from CreateSession only.
        return Err(Status::invalid_argument(
            "Multiplexed sessions may only be created with CreateSession",
        ));
    }
    let session = (0..r.session_count.min(100))
        .map(|_| {
            spanner.sessions.create(
                &r.database,
                template,
                (spanner.unique(), via.as_ref()),
                &knobs,
            )
        })
        .collect::<Result<_, _>>()?;
    Ok(Response::new(pb::BatchCreateSessionsResponse { session }))
}

pub(super) async fn get(
    spanner: &LocalSpanner,
    request: Request<pb::GetSessionRequest>,
) -> Result<Response<pb::Session>, Status> {
    let via = caller(&request);
    let name = request.into_inner().name;
    spanner
        .sessions
        .touch(&name, via.as_ref(), &spanner.knobs.get())
        .map(Response::new)
}

pub(super) async fn delete(
    spanner: &LocalSpanner,
    request: Request<pb::DeleteSessionRequest>,
) -> Result<Response<()>, Status> {
    let name = request.into_inner().name;
    spanner.sessions.delete(&name).map(Response::new)
}

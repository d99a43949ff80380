//! A minimal Spanner client for tests: sessions, and streaming with resume on UNAVAILABLE.

use std::collections::HashMap;

use prost::Message as _;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_client::SpannerClient;
use spanprof::wire::{Row, StreamCounters, StreamDecoder, Type};
use tonic::transport::Channel;

pub const DATABASE: &str = "projects/test-project/instances/test-instance/databases/test-db";

/// What one streamed query gave.
#[derive(Debug)]
pub struct Streamed {
    pub rows: Vec<Row>,
    pub columns: Vec<spanprof::wire::Field>,
    pub messages: Vec<pb::PartialResultSet>,
    pub resumes: u32,
    pub counters: StreamCounters,
    pub stats: Option<spanprof::wire::ResultStats>,
}

pub struct TestClient {
    pub client: SpannerClient<Channel>,
    pub session: String,
}

impl TestClient {
    pub async fn connect(host_port: &str) -> Self {
        let channel = Channel::from_shared(format!("http://{host_port}"))
            .expect("a valid URI")
            .initial_stream_window_size(8 << 20)
            .initial_connection_window_size(16 << 20)
            .connect()
            .await
            .expect("connects");
        let mut client = SpannerClient::new(channel).max_decoding_message_size(64 << 20);
        let session = client
            .create_session(pb::CreateSessionRequest {
                database: DATABASE.into(),
                session: None,
            })
            .await
            .expect("a session")
            .into_inner()
            .name;
        TestClient { client, session }
    }

    pub fn request(&self, sql: &str) -> pb::ExecuteSqlRequest {
        pb::ExecuteSqlRequest {
            session: self.session.clone(),
            sql: sql.into(),
            ..Default::default()
        }
    }

    /// Streams `request`, resuming from the last token on UNAVAILABLE (at most 1,000 times).
    /// Messages are fed to the decoder only once a token covers them, so nothing is decoded twice.
    pub async fn stream(
        &mut self,
        mut request: pb::ExecuteSqlRequest,
    ) -> Result<Streamed, tonic::Status> {
        let mut decoder = StreamDecoder::new();
        let mut rows = Vec::new();
        let mut messages = Vec::new();
        let mut held: Vec<pb::PartialResultSet> = Vec::new();
        let mut resumes = 0;
        'attempt: loop {
            let mut stream = match self.client.execute_streaming_sql(request.clone()).await {
                Ok(response) => response.into_inner(),
                Err(s) if s.code() == tonic::Code::Unavailable && resumes < 1000 => {
                    resumes += 1;
                    continue;
                }
                Err(s) => return Err(s),
            };
            loop {
                match stream.message().await {
                    Ok(Some(msg)) => {
                        let token = msg.resume_token.clone();
                        held.push(msg);
                        if !token.is_empty() {
                            for m in held.drain(..) {
                                decoder
                                    .feed_bytes(&m.encode_to_vec(), &mut rows)
                                    .map_err(|e| tonic::Status::data_loss(e.to_string()))?;
                                messages.push(m);
                            }
                            request.resume_token = token;
                        }
                    }
                    Ok(None) => break 'attempt,
                    Err(s) if s.code() == tonic::Code::Unavailable && resumes < 1000 => {
                        resumes += 1;
                        held.clear();
                        continue 'attempt;
                    }
                    Err(s) => return Err(s),
                }
            }
        }
        for m in held.drain(..) {
            decoder
                .feed_bytes(&m.encode_to_vec(), &mut rows)
                .map_err(|e| tonic::Status::data_loss(e.to_string()))?;
            messages.push(m);
        }
        decoder
            .finish()
            .map_err(|e| tonic::Status::data_loss(e.to_string()))?;
        Ok(Streamed {
            columns: decoder
                .stream()
                .columns()
                .map(<[_]>::to_vec)
                .unwrap_or_default(),
            counters: *decoder.stream().counters(),
            stats: decoder.stream_mut().take_stats(),
            rows,
            messages,
            resumes,
        })
    }

    pub async fn query(&mut self, sql: &str) -> Result<Streamed, tonic::Status> {
        let request = self.request(sql);
        self.stream(request).await
    }
}

/// A request with typed parameters.
pub fn with_params(
    mut request: pb::ExecuteSqlRequest,
    params: &[(&str, Type, prost_types::Value)],
) -> pb::ExecuteSqlRequest {
    let mut fields = std::collections::BTreeMap::new();
    let mut types = HashMap::new();
    for (name, ty, value) in params {
        fields.insert((*name).to_owned(), value.clone());
        types.insert((*name).to_owned(), pb::Type::from(ty));
    }
    request.params = Some(prost_types::Struct { fields });
    request.param_types = types;
    request
}

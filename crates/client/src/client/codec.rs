//! A gRPC codec that hands over each response message as its raw bytes, so that decoding them can be
//! timed (and done by a decoder of our choice) instead of disappearing inside tonic.

use std::marker::PhantomData;

use prost::bytes::{Buf, Bytes};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder};
use tonic_prost::ProstEncoder;

/// Encodes requests with prost; yields responses as raw message bytes.
#[derive(Debug)]
pub struct RawResponseCodec<Req>(PhantomData<Req>);

impl<Req> Default for RawResponseCodec<Req> {
    fn default() -> Self {
        RawResponseCodec(PhantomData)
    }
}

impl<Req: prost::Message + Send + 'static> Codec for RawResponseCodec<Req> {
    type Encode = Req;
    type Decode = Bytes;
    type Encoder = ProstEncoder<Req>;
    type Decoder = RawDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        RawDecoder
    }
}

/// Takes a whole gRPC message's bytes as they are.
#[derive(Debug, Clone, Copy, Default)]
pub struct RawDecoder;

impl Decoder for RawDecoder {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

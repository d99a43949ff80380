//! Field numbers and wire types of the messages a result stream is made of, named once for the code
//! that reads or writes them by hand (the fast decoder's scanner, the local instance's message
//! builder). Checked against the public Spanner v1 and `google.protobuf` protos (`proto/`); a test
//! checks them against what prost encodes.
//!
//! Keys (`field << 3 | wire type`) are given as bytes for the fields whose key is one byte, which is
//! every field here: a match on a named key compiles to the same code as one on its number.

/// Protobuf wire types (the low three bits of a key).
pub mod wire_type {
    /// A varint.
    pub const VARINT: u8 = 0;
    /// 8 bytes, little-endian.
    pub const FIXED64: u8 = 1;
    /// A varint length, then that many bytes.
    pub const LEN: u8 = 2;
    /// The start of a group (deprecated, still skipped).
    pub const START_GROUP: u8 = 3;
    /// The end of a group.
    pub const END_GROUP: u8 = 4;
    /// 4 bytes, little-endian.
    pub const FIXED32: u8 = 5;
}

/// The one-byte key of `field` (1 to 15) with `wire_type`; anything else does not compile where a
/// constant is built from it.
pub const fn key(field: u32, wire_type: u8) -> u8 {
    assert!(field >= 1 && field <= 15 && wire_type <= wire_type::FIXED32);
    (field as u8) << 3 | wire_type
}

/// `google.spanner.v1.PartialResultSet`.
pub mod partial_result_set {
    use super::{key, wire_type::LEN};

    /// `metadata`: ResultSetMetadata, in the first message only.
    pub const METADATA: u32 = 1;
    /// `values`: repeated google.protobuf.Value.
    pub const VALUES: u32 = 2;
    /// `chunked_value`: bool, the last value continues in the next message.
    pub const CHUNKED_VALUE: u32 = 3;
    /// `resume_token`: bytes.
    pub const RESUME_TOKEN: u32 = 4;
    /// `stats`: ResultSetStats.
    pub const STATS: u32 = 5;
    /// `precommit_token`: MultiplexedSessionPrecommitToken.
    pub const PRECOMMIT_TOKEN: u32 = 8;
    /// `last`: bool.
    pub const LAST: u32 = 9;

    /// The key of one value (`values`, length-delimited): nearly every field of a stream.
    pub const VALUES_KEY: u8 = key(VALUES, LEN);
}

/// `google.protobuf.Value`: one field of the `kind` oneof.
pub mod value {
    use super::key;
    use super::wire_type::{FIXED64, LEN, VARINT};

    /// `null_value`: NullValue (an enum, always 0).
    pub const NULL_VALUE: u32 = 1;
    /// `number_value`: double.
    pub const NUMBER_VALUE: u32 = 2;
    /// `string_value`: string.
    pub const STRING_VALUE: u32 = 3;
    /// `bool_value`: bool.
    pub const BOOL_VALUE: u32 = 4;
    /// `struct_value`: Struct.
    pub const STRUCT_VALUE: u32 = 5;
    /// `list_value`: ListValue.
    pub const LIST_VALUE: u32 = 6;

    /// The key of `null_value` (varint).
    pub const NULL_KEY: u8 = key(NULL_VALUE, VARINT);
    /// The key of `number_value` (fixed64).
    pub const NUMBER_KEY: u8 = key(NUMBER_VALUE, FIXED64);
    /// The key of `string_value` (length-delimited).
    pub const STRING_KEY: u8 = key(STRING_VALUE, LEN);
    /// The key of `bool_value` (varint).
    pub const BOOL_KEY: u8 = key(BOOL_VALUE, VARINT);
    /// The key of `list_value` (length-delimited).
    pub const LIST_KEY: u8 = key(LIST_VALUE, LEN);
}

/// `google.protobuf.ListValue`.
pub mod list_value {
    use super::{key, wire_type::LEN};

    /// `values`: repeated google.protobuf.Value.
    pub const VALUES: u32 = 1;

    /// The key of one element (`values`, length-delimited).
    pub const VALUES_KEY: u8 = key(VALUES, LEN);
}

#[cfg(test)]
mod tests {
    use prost::Message as _;
    use prost_types::value::Kind;
    use prost_types::{ListValue, Value};

    use super::*;
    use crate::proto::google::spanner::v1 as pb;

    /// The first byte prost writes for a message holding only `kind`.
    fn value_key(kind: Kind) -> u8 {
        Value { kind: Some(kind) }.encode_to_vec()[0]
    }

    #[test]
    fn value_keys_are_the_ones_prost_writes() {
        assert_eq!(value_key(Kind::NullValue(0)), value::NULL_KEY);
        assert_eq!(value_key(Kind::NumberValue(1.5)), value::NUMBER_KEY);
        assert_eq!(value_key(Kind::StringValue("a".into())), value::STRING_KEY);
        assert_eq!(value_key(Kind::BoolValue(true)), value::BOOL_KEY);
        assert_eq!(
            value_key(Kind::ListValue(ListValue::default())),
            value::LIST_KEY
        );
        let in_struct = Kind::StructValue(prost_types::Struct::default());
        assert_eq!(
            value_key(in_struct),
            key(value::STRUCT_VALUE, wire_type::LEN)
        );
        let list = ListValue {
            values: vec![Value::default()],
        };
        assert_eq!(list.encode_to_vec()[0], list_value::VALUES_KEY);
    }

    #[test]
    fn partial_result_set_fields_are_the_ones_prost_writes() {
        use partial_result_set as f;
        // Each field alone, set to something prost does not leave out, and the key it starts with.
        let cases = [
            (
                pb::PartialResultSet {
                    metadata: Some(pb::ResultSetMetadata::default()),
                    ..Default::default()
                },
                key(f::METADATA, wire_type::LEN),
            ),
            (
                pb::PartialResultSet {
                    values: vec![Value::default()],
                    ..Default::default()
                },
                f::VALUES_KEY,
            ),
            (
                pb::PartialResultSet {
                    chunked_value: true,
                    ..Default::default()
                },
                key(f::CHUNKED_VALUE, wire_type::VARINT),
            ),
            (
                pb::PartialResultSet {
                    resume_token: vec![1],
                    ..Default::default()
                },
                key(f::RESUME_TOKEN, wire_type::LEN),
            ),
            (
                pb::PartialResultSet {
                    stats: Some(pb::ResultSetStats::default()),
                    ..Default::default()
                },
                key(f::STATS, wire_type::LEN),
            ),
            (
                pb::PartialResultSet {
                    precommit_token: Some(pb::MultiplexedSessionPrecommitToken::default()),
                    ..Default::default()
                },
                key(f::PRECOMMIT_TOKEN, wire_type::LEN),
            ),
            (
                pb::PartialResultSet {
                    last: true,
                    ..Default::default()
                },
                key(f::LAST, wire_type::VARINT),
            ),
        ];
        for (message, expected) in cases {
            assert_eq!(
                message.encode_to_vec().first(),
                Some(&expected),
                "{message:?}"
            );
        }
    }
}

"""Reads a query through the official Python Spanner client and prints each row as canonical JSON.

Used by spanprof's tests to check that a client nobody here wrote reads the built-in local instance.
The instance is found through SPANNER_EMULATOR_HOST, as for the Cloud Spanner emulator.

usage: read_rows.py SQL   (rows on stdout, one JSON array per line; a summary on stderr)
"""

import base64
import datetime
import decimal
import json
import math
import os
import sys

from google.auth.credentials import AnonymousCredentials
from google.cloud import spanner
from google.cloud.spanner_v1 import TypeCode


def timestamp_text(value):
    """RFC 3339 in UTC, fractional seconds without trailing zeros (none when zero)."""
    value = value.astimezone(datetime.timezone.utc)
    nanos = getattr(value, "nanosecond", 0) or value.microsecond * 1000
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if nanos:
        text += "." + f"{nanos:09d}".rstrip("0")
    return text + "Z"


def canonical(value, field_type):
    """The canonical row encoding of shared/vectors/README.md."""
    if value is None:
        return None
    code = field_type.code
    if code == TypeCode.ARRAY:
        return [canonical(v, field_type.array_element_type) for v in value]
    if code == TypeCode.STRUCT:
        fields = field_type.struct_type.fields
        return [canonical(v, f.type_) for v, f in zip(value, fields)]
    if code == TypeCode.BOOL:
        return bool(value)
    if code in (TypeCode.INT64, TypeCode.ENUM):
        return str(value)
    if code in (TypeCode.FLOAT64, TypeCode.FLOAT32):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if code == TypeCode.NUMERIC:
        return format(decimal.Decimal(value), "f")
    if code in (TypeCode.BYTES, TypeCode.PROTO):
        # The client hands BYTES back as the base64 text it received.
        raw = value if isinstance(value, (bytes, bytearray)) else str(value).encode("ascii")
        return base64.b64encode(base64.b64decode(raw, validate=True)).decode("ascii")
    if code == TypeCode.TIMESTAMP:
        return timestamp_text(value)
    if code == TypeCode.DATE:
        return value.isoformat()
    if code == TypeCode.JSON:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def main():
    sql = sys.argv[1]
    client = spanner.Client(project="test-project", credentials=AnonymousCredentials())
    database = client.instance("test-instance").database("test-db")
    count = 0
    out = sys.stdout
    with database.snapshot() as snapshot:
        results = snapshot.execute_sql(sql)
        fields = None
        for row in results:
            if fields is None:
                fields = results.fields
            out.write(json.dumps([canonical(v, f.type_) for v, f in zip(row, fields)], ensure_ascii=False))
            out.write("\n")
            count += 1
    print(f"read_rows: {count} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
    # Leave without interpreter finalization: there, grpcio's call finalizers (_Rendezvous.__del__)
    # wait for a lock that a frozen grpc daemon thread may hold, and the process hangs after printing
    # every row (seen here after resume-heavy reads, with grpcio 1.75 and 1.85).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)

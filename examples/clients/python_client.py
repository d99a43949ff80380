"""A spanprof client driver for the official Python Spanner client (google-cloud-spanner 3.71.0).

Reads SPANPROF_SQL through the client from the instance named by SPANNER_EMULATOR_HOST,
SPANPROF_PROJECT, SPANPROF_INSTANCE and SPANPROF_DATABASE (what `spanprof client` sets), and prints
each row as a canonical JSON line (the encoding of tests/vectors/README.md), so that spanprof checks
every value. With --count it prints only `rows N`.

    spanprof client -- python3 examples/clients/python_client.py
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


def rfc3339(value):
    """UTC, fractional seconds without trailing zeros, none when zero."""
    value = value.astimezone(datetime.timezone.utc)
    nanos = getattr(value, "nanosecond", 0) or value.microsecond * 1000
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if nanos:
        text += "." + f"{nanos:09d}".rstrip("0")
    return text + "Z"


def encode(value, type_):
    """One value in the canonical encoding, by its column type."""
    if value is None:
        return None
    code = type_.code
    if code == TypeCode.ARRAY:
        return [encode(v, type_.array_element_type) for v in value]
    if code == TypeCode.STRUCT:
        return [encode(v, f.type_) for v, f in zip(value, type_.struct_type.fields)]
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
        raw = value if isinstance(value, (bytes, bytearray)) else str(value).encode("ascii")
        return base64.b64encode(base64.b64decode(raw, validate=True)).decode("ascii")
    if code == TypeCode.TIMESTAMP:
        return rfc3339(value)
    if code == TypeCode.DATE:
        return value.isoformat()
    if code == TypeCode.JSON:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def main():
    count_only = "--count" in sys.argv[1:]
    sql = os.environ["SPANPROF_SQL"]
    client = spanner.Client(project=os.environ["SPANPROF_PROJECT"], credentials=AnonymousCredentials())
    database = client.instance(os.environ["SPANPROF_INSTANCE"]).database(os.environ["SPANPROF_DATABASE"])
    out = sys.stdout
    rows = 0
    with database.snapshot() as snapshot:
        results = snapshot.execute_sql(sql)
        fields = None
        for row in results:
            rows += 1
            if count_only:
                continue
            if fields is None:
                fields = results.fields
            out.write(json.dumps([encode(v, f.type_) for v, f in zip(row, fields)], ensure_ascii=False))
            out.write("\n")
    if count_only:
        out.write(f"rows {rows}\n")


if __name__ == "__main__":
    main()
    # Leave without interpreter finalization: grpcio's call finalizers can wait there for a lock a
    # frozen grpc daemon thread holds, and the process would hang after printing every row.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)

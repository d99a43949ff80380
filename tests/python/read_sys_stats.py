"""Reads SPANNER_SYS.LOCK_STATS_TOP_MINUTE through the official Python Spanner client (a query in a
snapshot, as people read Spanner's lock statistics).

Used by spanprof's tests to check that a client nobody here wrote decodes the built-in local
instance's lock statistics: their TIMESTAMP, BYTES, FLOAT64 and ARRAY<STRUCT> columns. The
instance is found through SPANNER_EMULATOR_HOST.

usage: read_sys_stats.py   (one JSON object per row on stdout)
"""

import base64
import json
import os
import sys

from google.auth.credentials import AnonymousCredentials
from google.cloud import spanner

SQL = (
    "SELECT INTERVAL_END, ROW_RANGE_START_KEY, LOCK_WAIT_SECONDS, SAMPLE_LOCK_REQUESTS "
    "FROM SPANNER_SYS.LOCK_STATS_TOP_MINUTE ORDER BY LOCK_WAIT_SECONDS DESC"
)


def main():
    client = spanner.Client(project="test-project", credentials=AnonymousCredentials())
    database = client.instance("test-instance").database("test-db")
    with database.snapshot() as snapshot:
        rows = list(snapshot.execute_sql(SQL))
    for end, key, seconds, samples in rows:
        print(
            json.dumps(
                {
                    "interval_end": end.isoformat(),
                    # The client hands BYTES over as their base64 text (as it does any BYTES).
                    "row_range_start_key": base64.b64decode(key).decode("utf-8"),
                    "lock_wait_seconds": seconds,
                    # A STRUCT arrives as a list of its fields' values (or a Struct-like row).
                    "samples": [list(sample) for sample in samples],
                }
            )
        )
    print(f"read_sys_stats: {len(rows)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
    # As read_rows.py: leave without interpreter finalization, where grpcio's finalizers can hang.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)

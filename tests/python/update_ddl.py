"""Creates a table through the official Python Spanner client (UpdateDatabaseDdl), writes rows by
DML and by a mutation in one read-write transaction, and reads them back by SQL and by key.

Used by spanprof's tests to check that a client nobody here wrote changes the built-in local
instance's schema as it would Spanner's. The instance is found through SPANNER_EMULATOR_HOST.

usage: update_ddl.py   (one JSON object per step on stdout)
"""

import datetime
import json
import os
import sys

from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import spanner
from google.cloud.spanner_v1 import KeySet


def main():
    client = spanner.Client(project="test-project", credentials=AnonymousCredentials())
    database = client.instance("test-instance").database("test-db")
    operation = database.update_ddl(
        [
            "CREATE TABLE Tracks (TrackId INT64 NOT NULL, Title STRING(MAX), "
            "Released DATE, Score FLOAT64) PRIMARY KEY (TrackId)",
            "CREATE INDEX TracksByTitle ON Tracks (Title)",
        ]
    )
    operation.result(30)
    print(json.dumps({"step": "ddl", "statements": len(operation.metadata.statements)}))

    def write(transaction):
        transaction.execute_update(
            "INSERT INTO Tracks (TrackId, Title, Released, Score) "
            "VALUES (1, 'One', '2024-01-02', 1.5)"
        )
        transaction.insert(
            "Tracks",
            columns=("TrackId", "Title", "Released", "Score"),
            values=[(2, "Two", datetime.date(2025, 3, 4), 2.5)],
        )

    database.run_in_transaction(write)

    with database.snapshot() as snapshot:
        rows = snapshot.execute_sql(
            "SELECT TrackId, Title, Released, Score FROM Tracks ORDER BY TrackId"
        )
        # Typed by the client as the columns' types say: int, str, datetime.date, float.
        out = [[type(v).__name__ + ":" + str(v) for v in row] for row in rows]
    print(json.dumps({"step": "query", "rows": out}))

    with database.snapshot() as snapshot:
        rows = snapshot.read("Tracks", ("TrackId", "Released"), KeySet(keys=[[2]]))
        out = [[str(v) for v in row] for row in rows]
    print(json.dumps({"step": "read", "rows": out}))

    try:
        database.update_ddl(["ALTER TABLE Tracks ADD COLUMN Extra INT64"]).result(30)
        refused = "nothing"
    except exceptions.GoogleAPICallError as e:
        refused = type(e).__name__
    print(json.dumps({"step": "alter", "refused": refused}))

    try:
        database.update_ddl(["CREATE TABLE tracks (X INT64) PRIMARY KEY (X)"]).result(30)
        failed = "nothing"
    except exceptions.GoogleAPICallError as e:
        failed = type(e).__name__ + ": " + e.message
    print(json.dumps({"step": "duplicate", "failed": failed}))
    print("update_ddl: done", file=sys.stderr)


if __name__ == "__main__":
    main()
    # As read_rows.py: leave without interpreter finalization, where grpcio's finalizers can hang.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)

'use strict';
// Runs transfers between two accounts through the official Node Spanner client's read-write
// transactions (runTransactionAsync: DML, commit, and its own retry after an ABORTED), then prints
// the two balances as one JSON array, and the attempts it made on stderr.
//
// Used by spanprof's tests to check that a client nobody here wrote runs read-write transactions
// on the built-in local instance. The instance is found through SPANNER_EMULATOR_HOST; the client
// through NODE_PATH (scripts/test installs it).
//
//   NODE_PATH=/var/tmp/spanprof-node/node_modules SPANNER_EMULATOR_HOST=... node transfer.js 9

const {Spanner} = require('@google-cloud/spanner');

async function main() {
  const transfers = Number(process.argv[2]);
  const spanner = new Spanner({projectId: 'test-project'});
  const database = spanner.instance('test-instance').database('test-db');
  let attempts = 0;
  for (let i = 0; i < transfers; i++) {
    await database.runTransactionAsync(async (transaction) => {
      attempts += 1;
      await transaction.runUpdate('UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1');
      await transaction.runUpdate('UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2');
      await transaction.commit();
    });
  }
  const [rows] = await database.run(
    'SELECT Balance FROM Accounts WHERE AccountId IN (1, 2) ORDER BY AccountId',
  );
  process.stdout.write(JSON.stringify(rows.map((row) => Number(row.toJSON().Balance))) + '\n');
  process.stderr.write(`${transfers} transfers in ${attempts} attempts\n`);
  await database.close();
}

main().catch((err) => {
  process.stderr.write(`transfer.js: ${err.stack || err.message}\n`);
  process.exit(1);
});

'use strict';
// A spanprof retry-lab driver for the official Node Spanner client (@google-cloud/spanner 8.13.0).
//
// Runs read-write transactions through the client's own runner (runTransactionAsync, which retries
// an ABORTED itself), each tagged `spanprof-rw`: it reads AccountId 1, then runs SPANPROF_SQL (a DML
// statement; the lab gives an UPDATE of that row by default), and commits. Then one more, tagged
// `spanprof-rw-failing`, whose second statement the server refuses and whose callback throws, so
// that what the client does after a failure other than ABORTED is seen. The instance and database
// are those named by SPANNER_EMULATOR_HOST, SPANPROF_PROJECT, SPANPROF_INSTANCE and
// SPANPROF_DATABASE (what `spanprof client` sets); SPANPROF_TRANSACTIONS transactions (6). Prints
// `N committed in A attempts` on stderr.
//
//   NODE_PATH=/var/tmp/spanprof-node/node_modules \
//     spanprof client --read-write --abort-every 3 -- node examples/clients/node_read_write.js

const {Spanner} = require('@google-cloud/spanner');

const READ = 'SELECT Balance FROM Accounts WHERE AccountId = 1';
const REFUSED = 'UPDATE NoSuchTable SET Balance = 0 WHERE AccountId = 1';

async function main() {
  const sql = process.env.SPANPROF_SQL;
  const transactions = Number(process.env.SPANPROF_TRANSACTIONS || '6');
  const spanner = new Spanner({projectId: process.env.SPANPROF_PROJECT});
  const database = spanner
    .instance(process.env.SPANPROF_INSTANCE)
    .database(process.env.SPANPROF_DATABASE);
  let attempts = 0;
  const tagged = (tag) => ({requestOptions: {transactionTag: tag}});
  for (let i = 0; i < transactions; i++) {
    await database.runTransactionAsync(tagged('spanprof-rw'), async (transaction) => {
      attempts += 1;
      await transaction.run(READ);
      await transaction.runUpdate(sql);
      await transaction.commit();
    });
  }
  try {
    await database.runTransactionAsync(tagged('spanprof-rw-failing'), async (transaction) => {
      await transaction.runUpdate(sql);
      await transaction.runUpdate(REFUSED);
      await transaction.commit();
    });
  } catch (err) {
    process.stderr.write(`the failing transaction failed: ${err.message}\n`);
  }
  process.stderr.write(`${transactions} committed in ${attempts} attempts\n`);
  await database.close();
}

main().catch((err) => {
  process.stderr.write(`node_read_write.js: ${err.stack || err.message}\n`);
  process.exit(1);
});

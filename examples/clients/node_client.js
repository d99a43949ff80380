'use strict';
// A spanprof client driver for the official Node Spanner client (@google-cloud/spanner 8.13.0).
//
// Reads SPANPROF_SQL through the client from the instance named by SPANNER_EMULATOR_HOST,
// SPANPROF_PROJECT, SPANPROF_INSTANCE and SPANPROF_DATABASE (what `spanprof client` sets), and
// prints each row as a canonical JSON line (the encoding of tests/vectors/README.md), so that
// spanprof checks every value. With --count it prints only `rows N`. The client is found through
// NODE_PATH (scripts/test installs it under ${SPANPROF_NODE_DIR:-/var/tmp/spanprof-node}):
//
//   NODE_PATH=/var/tmp/spanprof-node/node_modules spanprof client -- node examples/clients/node_client.js

const {Spanner} = require('@google-cloud/spanner');

// google.spanner.v1.TypeCode, for a client that hands codes over as numbers.
const CODES = {
  1: 'BOOL', 2: 'INT64', 3: 'FLOAT64', 4: 'TIMESTAMP', 5: 'DATE', 6: 'STRING', 7: 'BYTES',
  8: 'ARRAY', 9: 'STRUCT', 10: 'NUMERIC', 11: 'JSON', 13: 'PROTO', 14: 'ENUM', 15: 'FLOAT32',
  16: 'INTERVAL', 17: 'UUID',
};

function codeOf(type) {
  return typeof type.code === 'number' ? CODES[type.code] : type.code;
}

// JSON with its object keys sorted, for a canonical text.
function sortedKeys(value) {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const key of Object.keys(value).sort()) out[key] = sortedKeys(value[key]);
    return out;
  }
  return value;
}

// RFC 3339 in UTC with the nanoseconds a PreciseDate keeps, trailing zeros dropped.
function rfc3339(date) {
  const ns = BigInt(date.getFullTimeString());
  let seconds = ns / 1000000000n;
  let nanos = ns % 1000000000n;
  if (nanos < 0n) {
    nanos += 1000000000n;
    seconds -= 1n;
  }
  let text = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  if (nanos > 0n) text += '.' + nanos.toString().padStart(9, '0').replace(/0+$/, '');
  return text + 'Z';
}

function plain(value) {
  return value !== null && typeof value === 'object' && 'value' in value ? value.value : value;
}

// One value in the canonical encoding, by its column type.
function encode(value, type) {
  if (value === null || value === undefined) return null;
  switch (codeOf(type)) {
    case 'ARRAY':
      return value.map((v) => encode(v, type.arrayElementType));
    case 'STRUCT':
      return type.structType.fields.map((f, i) => encode(plain(value[i]), f.type));
    case 'BOOL':
      return Boolean(value);
    case 'INT64':
    case 'ENUM':
      return String(plain(value));
    case 'FLOAT64':
    case 'FLOAT32': {
      const n = Number(plain(value));
      if (Number.isNaN(n)) return 'NaN';
      if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
      return n;
    }
    case 'NUMERIC':
      return String(plain(value));
    case 'BYTES':
    case 'PROTO':
      return Buffer.isBuffer(value) ? value.toString('base64') : String(value);
    case 'TIMESTAMP':
      return rfc3339(value);
    case 'DATE':
      return value.toJSON();
    case 'JSON':
      return JSON.stringify(sortedKeys(typeof value === 'string' ? JSON.parse(value) : value));
    default:
      return String(plain(value));
  }
}

function main() {
  const countOnly = process.argv.slice(2).includes('--count');
  const spanner = new Spanner({projectId: process.env.SPANPROF_PROJECT});
  const database = spanner
    .instance(process.env.SPANPROF_INSTANCE)
    .database(process.env.SPANPROF_DATABASE);
  let fields = null;
  let rows = 0;
  let pending = [];
  const flush = () => {
    if (pending.length) process.stdout.write(pending.join(''));
    pending = [];
  };
  database
    .runStream({sql: process.env.SPANPROF_SQL})
    .on('response', (chunk) => {
      const rowType = chunk.metadata && chunk.metadata.rowType;
      if (!fields && rowType && rowType.fields && rowType.fields.length) fields = rowType.fields;
    })
    .on('error', (err) => {
      process.stderr.write(`node_client: ${err.message}\n`);
      flush();
      process.exitCode = 1;
      database.close().finally(() => process.exit(1));
    })
    .on('data', (row) => {
      rows += 1;
      if (countOnly) return;
      pending.push(JSON.stringify(row.map((cell, i) => encode(cell.value, fields[i].type))) + '\n');
      if (pending.length >= 1000) flush();
    })
    .on('end', () => {
      if (countOnly) pending.push(`rows ${rows}\n`);
      const text = pending.join('');
      database.close().finally(() => process.stdout.write(text, () => process.exit(0)));
    });
}

main();

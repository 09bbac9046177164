#!/usr/bin/env node
// `npx hudi-edge manifest TABLE`: the package's command line, in JS over the same wasm engine,
// so a JS project needs no Rust toolchain for what static hosts need.

import { parseArgs } from 'node:util';
import { writeFile } from 'node:fs/promises';
import { HudiError, writeManifest, type S3Options } from './node.js';

const USAGE = `Usage: hudi-edge manifest TABLE [--output FILE (- = stdout)] [--listing auto|s3|autoindex]

Writes TABLE/.hoodie/hudi-edge-manifest.json: every file of the table with its size, so hosts
without a list API (static sites, CDNs, python -m http.server) can serve it. TABLE is a local
directory, a file:// URL, s3://bucket/prefix (credentials from AWS_* variables) or an http(s)
URL of a host that lists (then --output). Rewrite it after each commit and clean.`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      output: { type: 'string' },
      listing: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, table, ...rest] = positionals;
  if (values.help || command === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (command !== 'manifest' || !table || rest.length > 0) {
    console.error(USAGE);
    return 2;
  }
  const env = process.env;
  const endpoint = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  // Unset variables left out; an endpoint (a local S3 server) is addressed path-style.
  const s3: S3Options = JSON.parse(
    JSON.stringify({
      region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION,
      endpoint,
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
      sessionToken: env.AWS_SESSION_TOKEN,
      forcePathStyle: endpoint ? true : undefined,
    }),
  );
  const output = values.output;
  const listing = values.listing as 'auto' | 's3' | 'autoindex' | undefined;
  const m = await writeManifest(table, { write: output === undefined, listing, s3 });
  if (output === '-') process.stdout.write(m.json);
  else if (output !== undefined) await writeFile(output, m.json);
  const where = output === '-' ? 'stdout' : (output ?? `${table.replace(/\/+$/, '')}/${m.path}`);
  console.error(`hudi-edge manifest: ${m.files} files, latest instant ${m.latestInstant ?? 'none'} → ${where}`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    // The same shape as the Rust CLI's errors: the stable code first.
    const code = e instanceof HudiError ? e.code : 'IO';
    console.error(`error[${code}]: ${e?.message ?? e}`);
    process.exit(1);
  },
);

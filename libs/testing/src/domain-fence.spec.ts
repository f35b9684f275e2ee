/**
 * The lint rule that keeps domain code free of transport, database and network imports
 * (eslint.config.mjs, DOMAIN_FENCE): linted as if the text were a file of a service's domain.
 */
import path from 'node:path';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '../../..');
// Module boundaries need Nx's project graph, which a test has no business building.
const eslint = new ESLint({ cwd: root, overrideConfig: { rules: { '@nx/enforce-module-boundaries': 'off' } } });

async function restricted(code: string, file = 'services/mailbox/src/domain/fence-probe.ts'): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => /no-restricted-(imports|globals)$/.test(m.ruleId ?? '')).map((m) => m.message);
}

describe('the domain fence', () => {
  jest.setTimeout(60_000);

  it.each([
    [`import type { Kysely } from '@mailroom/db';`, 'the database'],
    [`import { sql } from 'kysely';`, 'the database'],
    [`import type { Outbox } from '@mailroom/runtime';`, 'the bus or the runtime'],
    [`import { connect } from '@nats-io/transport-node';`, 'the bus'],
    [`import { Pool } from 'undici';`, 'network clients'],
    [`import { Resolver } from 'node:dns/promises';`, 'network clients'],
    [`import express from 'express';`, 'the HTTP edge'],
    [`import { PostgresJSONObjectPlugin } from 'kysely/helpers/postgres';`, 'the database'],
    [`import { jetstream } from '@nats-io/jetstream';`, 'the bus'],
    [`import { SMTPServer } from 'smtp-server';`, 'the HTTP edge'],
    [`import { UserRepository } from '../repo/user.repository';`, 'through its ports'],
    [`import { fetchText } from '../clients/fetch-text';`, 'through its ports'],
  ])('refuses %s', async (code, why) => {
    const messages = await restricted(`${code}\nexport const x = 1;\n`);
    expect(messages).toEqual([expect.stringContaining(why)]);
  });

  it('refuses the fetch global', async () => {
    expect(await restricted(`export const get = () => fetch('https://example.com/');\n`)).toEqual([expect.stringContaining('network clients')]);
  });

  it('lets domain code name a repository by its type', async () => {
    expect(await restricted(`import type { UserRepository } from '../repo/user.repository';\nexport type U = UserRepository;\n`)).toEqual([]);
  });

  it('lets domain code import contracts, platform and libraries of pure logic', async () => {
    expect(await restricted(`import { AppError } from '@mailroom/contracts';\nimport type { Clock } from '@mailroom/platform';\nimport { z } from 'zod';\nexport const x = [AppError, z] as const;\nexport type C = Clock;\n`)).toEqual([]);
  });

  it('leaves the rest of a service free to use them', async () => {
    expect(await restricted(`import type { Kysely } from '@mailroom/db';\nexport type K = Kysely<unknown>;\n`, 'services/mailbox/src/repo/fence-probe.ts')).toEqual([]);
  });
});

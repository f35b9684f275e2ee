/**
 * docker-compose.yml against the Compose Specification's JSON schema, as dclint ships it (kept
 * up with the specification: volume subpath, models, provider): types, enums, and no key the
 * specification does not define (it closes its objects, but for x- extensions). deploy.spec.ts
 * checks what a schema cannot: that the services fit together.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DCLinter } from 'dclint';
import { parse, stringify } from 'yaml';

const compose = resolve(__dirname, '../../../docker-compose.yml');
// dclint's own style rules are not ours to follow: only its YAML and schema checks count here.
const linter = new DCLinter({ rules: {}, quiet: true, debug: false, exclude: [] });
const SCHEMA_CHECKS = ['invalid-yaml', 'invalid-schema', 'unknown-error'];
/** dclint's types do not resolve under nodenext (extensionless imports in its .d.ts): its LintResult, as far as used here. */
type LintResult = { messages: { rule: string; message: string }[] };
/** What the YAML and schema checks say of a file (dclint stops at the first schema error). */
const schemaErrors = (file: string) =>
  (linter.lintFiles([file], false) as LintResult[])
    .flatMap((r) => r.messages)
    .filter((m) => SCHEMA_CHECKS.includes(m.rule))
    .map((m) => m.message);

/** The schema's errors for a copy of docker-compose.yml changed by `edit`. */
function brokenCopy(edit: (c: Record<string, any>) => void): string[] {
  const copy = parse(readFileSync(compose, 'utf8'), { merge: true }) as Record<string, any>;
  edit(copy);
  const dir = mkdtempSync(join(tmpdir(), 'compose-schema-'));
  try {
    writeFileSync(join(dir, 'docker-compose.yml'), stringify(copy));
    return schemaErrors(join(dir, 'docker-compose.yml'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('docker-compose.yml against the Compose Specification', () => {
  it('is valid, every profile included', () => {
    expect(schemaErrors(compose)).toEqual([]);
  });

  it('refuses a broken copy: an unknown key in a service or at the top, an unknown dependency condition, a string for a list', () => {
    expect(brokenCopy(() => {})).toEqual([]);
    expect(
      brokenCopy((c) => {
        c.services.gateway.restart_policy = 'always';
      }),
    ).toEqual([expect.stringMatching(/instancePath="\/services\/gateway".*must NOT have additional properties/)]);
    expect(
      brokenCopy((c) => {
        c.volume = c.volumes;
      }),
    ).toEqual([expect.stringMatching(/instancePath="".*must NOT have additional properties/)]);
    expect(
      brokenCopy((c) => {
        c.services.gateway.depends_on.migrate.condition = 'service_done';
      }),
    ).toEqual([expect.stringMatching(/depends_on/)]);
    expect(
      brokenCopy((c) => {
        c.services.gateway.cap_drop = 'ALL';
      }),
    ).toEqual([expect.stringMatching(/instancePath="\/services\/gateway\/cap_drop".*must be array/)]);
  });
});

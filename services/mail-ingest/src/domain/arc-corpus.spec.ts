/**
 * The ValiMail ARC test suite's validation cases (arc-draft-validation-tests.yml: 10 scenarios,
 * 171 cases) run through our wrapper, each scenario's key records served by a loopback DNS
 * server and read with the resolver production uses. The expected chain validation status (cv)
 * is compared with our ARC verdict.
 *
 * Four ids appear twice in the "Arc Seal Fields" scenario; as with PyYAML, which the suite's own
 * harness uses, the later one counts. Messages are stored with LF line ends; they are given to
 * the wrapper with CRLF, as SMTP delivers them.
 */
import { readFileSync } from 'node:fs';
import { corpusPath, startDnsServer, type DnsServer } from '@mailroom/testing';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { createResolver, type MailAuthResolver } from '../clients/dns-resolver';
import { checkMailAuth, type VerdictResult } from './mail-auth';

/** Cases we get wrong, with why; a case that starts passing must leave this list. */
const KNOWN_FAILURES: Record<string, string> = {
  ams_fields_c_na:
    'the AMS was made relaxed/relaxed but has no c=, so it only verifies with a relaxed default; RFC 8617 4.1.2 keeps simple/simple, as does mailauth in strict mode',
  ams_fields_h_empty: 'mailauth finds no valid AMS when h= is empty (an AMS that signs only itself); the suite expects Pass',
};
const SCORE = { passed: 169, total: 171 };

const scenarioSchema = z.object({
  description: z.string(),
  tests: z.record(z.string(), z.object({ message: z.string(), cv: z.enum(['Pass', 'Fail', 'None', '']) })),
  'txt-records': z.record(z.string(), z.string()),
});
type Scenario = z.infer<typeof scenarioSchema>;

function loadScenarios(): Scenario[] {
  const source = readFileSync(corpusPath('arc-test-suite', 'arc-draft-validation-tests.yml'), 'utf8');
  return parseAllDocuments(source, { uniqueKeys: false }).map((doc) => scenarioSchema.parse(doc.toJS()));
}

/**
 * An empty cv marks a chain whose newest ARC-Seal already says cv=fail: RFC 8617 5.2 step 2
 * makes that a failed chain.
 */
function expectedVerdict(cv: Scenario['tests'][string]['cv']): VerdictResult {
  return cv === 'Pass' ? 'pass' : cv === 'None' ? 'none' : 'fail';
}

const scenarios = loadScenarios();
const cases = scenarios.flatMap((s) => Object.keys(s.tests));

describe('ARC corpus: ValiMail arc-test-suite validation', () => {
  it(`scores ${SCORE.passed}/${SCORE.total}`, () => {
    expect(cases).toHaveLength(SCORE.total);
    expect(Object.keys(KNOWN_FAILURES).filter((id) => !cases.includes(id))).toEqual([]);
    expect(SCORE.total - Object.keys(KNOWN_FAILURES).length).toBe(SCORE.passed);
  });

  describe.each(scenarios.map((s) => [s.description, s] as const))('%s', (_, scenario) => {
    let dns: DnsServer;
    let resolver: MailAuthResolver;

    beforeAll(async () => {
      dns = await startDnsServer(Object.entries(scenario['txt-records']).map(([name, text]) => ({ name, type: 'TXT' as const, text })));
      resolver = createResolver({ servers: [dns.servers], timeoutMs: 500, tries: 1 });
    });

    afterAll(async () => {
      resolver.cancel();
      await dns.close();
    });

    for (const [id, test] of Object.entries(scenario.tests)) {
      const known = KNOWN_FAILURES[id];
      (known ? it.failing : it)(known ? `${id} (known failure: ${known})` : id, async () => {
        const { arc } = await checkMailAuth(
          {
            raw: Buffer.from(test.message.replace(/\r?\n/g, '\r\n')),
            ip: '192.0.2.1',
            helo: 'segv.d1.example',
            mailFrom: 'jqd@d1.example',
            mta: 'mx.mailroom.test',
          },
          { resolve: resolver.resolve, timeoutMs: 5_000 },
        );
        expect(arc.result).toBe(expectedVerdict(test.cv));
      });
    }
  });
});

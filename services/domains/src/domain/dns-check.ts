/** One check of every record of a domain (a pending rotation's too): the lookups in parallel, each read by its rule (records.ts). */
import type { RecordKind } from '@mailroom/contracts';
import type { DnsLookup } from './ports';
import { checkBounce, checkDkim, checkDmarc, checkMx, checkSpf, lookupsOf, type Checks, type DomainKeys, type RecordCheck, type RecordSettings } from './records';

export async function checkRecords(dns: DnsLookup, d: DomainKeys, s: RecordSettings, at: Date): Promise<Checks> {
  const where = lookupsOf(d);
  const when = at.toISOString();
  const [mx, spf, dkim, dmarc, bounce, dkimNext] = await Promise.all([
    dns.mx(where.mx.name),
    dns.txt(where.spf.name),
    dns.txt(where.dkim.name),
    dns.txt(where.dmarc.name),
    dns.cname(where.bounce.name),
    where.dkim_next ? dns.txt(where.dkim_next.name) : undefined,
  ]);
  const checks: Record<Exclude<RecordKind, 'dkim_next'>, RecordCheck> & { dkim_next?: RecordCheck } = {
    mx: checkMx(mx, s, when),
    spf: checkSpf(spf, s, when),
    dkim: checkDkim(dkim, d.dkimPublicKey, when),
    dmarc: checkDmarc(dmarc, when),
    bounce: checkBounce(bounce, s, when),
  };
  if (d.next && dkimNext) checks.dkim_next = checkDkim(dkimNext, d.next.publicKey, when);
  return checks;
}

/**
 * The shipped deployments (deploy/k8s, docker-compose.yml) read as data: each workload of the
 * image gets its own bus credential and nothing more, NATS takes TLS and the operator
 * include from where they are mounted, its monitoring port is in no Service, and only
 * Mailroom's pods may reach NATS. No cluster or Docker here: what they would refuse at
 * apply time, and what they would accept but get wrong, is checked instead.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { posix, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { CONTEXT_SIGNER } from '@mailroom/messaging';
import { SERVICE_NAMES } from './platform';

const root = resolve(__dirname, '../../..');
const read = (file: string) => readFileSync(resolve(root, file), 'utf8');
/** Every identity `bus-credentials` writes: one per service, and `migrate`. */
const IDENTITIES = [...SERVICE_NAMES, 'migrate'].sort();
/** The files of its credentials directory an identity needs (readBusIdentity), and no more. */
const busFilesOf = (identity: string) => [`${identity}.creds`, `${identity}.seal-key`, `${identity}.subject-keys`, ...(identity === CONTEXT_SIGNER ? ['seal-master.key'] : [])].sort();
/**
 * The names in a workload's or container's definition, anywhere in it, of credential files
 * it must not get: another identity's .creds, .seal-key, .subject-keys or Secret,
 * bus-master.key (kept offline, never given to a service), and seal-master.key unless it is
 * the gateway. Read from the whole definition, so a second volume, a projected one or a
 * subPath mount gets caught as well as the bus volume's items.
 */
function foreignBusFiles(identity: string, definition: unknown): string[] {
  const text = JSON.stringify(definition);
  const named = (name: string) => new RegExp(`(?<![\\w.-])${name.replace(/[.-]/g, '\\$&')}(?![\\w.-])`).test(text);
  const others = IDENTITIES.filter((i) => i !== identity);
  return [
    ...others.flatMap((o) => [`${o}.creds`, `${o}.seal-key`, `${o}.subject-keys`, `mailroom-bus-${o}`]),
    'bus-master.key',
    ...(identity === CONTEXT_SIGNER ? [] : ['seal-master.key']),
  ].filter(named);
}

const labels = z.record(z.string(), z.string());
const keyItems = z.array(z.object({ key: z.string(), path: z.string() }));
const volume = z.object({
  name: z.string(),
  secret: z.object({ secretName: z.string(), items: keyItems.optional(), optional: z.boolean().optional() }).optional(),
  configMap: z.object({ name: z.string() }).optional(),
});
const mount = z.object({ name: z.string(), mountPath: z.string(), readOnly: z.boolean().optional() });
const container = z.object({
  name: z.string(),
  image: z.string(),
  args: z.array(z.string()).optional(),
  envFrom: z.array(z.object({ configMapRef: z.object({ name: z.string() }).optional() })).optional(),
  ports: z.array(z.object({ name: z.string().optional(), containerPort: z.number() })).optional(),
  volumeMounts: z.array(mount).optional(),
  startupProbe: z.unknown().optional(),
  livenessProbe: z.unknown().optional(),
  readinessProbe: z.unknown().optional(),
});
const podTemplate = z.object({
  metadata: z.object({ labels, annotations: labels.optional() }),
  spec: z.object({ containers: z.array(container), volumes: z.array(volume).optional() }),
});
const object = z.object({ kind: z.string(), metadata: z.object({ name: z.string(), labels: labels.optional() }) });
const workload = object.extend({ kind: z.enum(['Deployment', 'StatefulSet', 'Job']), spec: z.object({ template: podTemplate }) });
const service = object.extend({ kind: z.literal('Service'), spec: z.object({ ports: z.array(z.object({ port: z.number(), targetPort: z.union([z.string(), z.number()]).optional() })) }) });
const configMap = object.extend({ kind: z.literal('ConfigMap'), data: z.record(z.string(), z.string()) });
const peer = z.object({ podSelector: z.object({ matchLabels: labels }).optional(), namespaceSelector: z.unknown().optional(), ipBlock: z.unknown().optional() });
const networkPolicy = object.extend({
  kind: z.literal('NetworkPolicy'),
  spec: z.object({
    podSelector: z.object({ matchLabels: labels }),
    policyTypes: z.array(z.string()),
    ingress: z.array(z.object({ from: z.array(peer).optional(), ports: z.array(z.object({ protocol: z.string(), port: z.number() })) })),
  }),
});

const k8sFiles = readdirSync(resolve(root, 'deploy/k8s')).filter((f) => f.endsWith('.yaml'));
const kustomization = z.object({ resources: z.array(z.string()) }).parse(parse(read('deploy/k8s/kustomization.yaml')));
const objects = kustomization.resources.flatMap((file) =>
  parseAllDocuments(read(`deploy/k8s/${file}`)).map((doc) => {
    if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
    return object.loose().parse(doc.toJS());
  }),
);
const ofKind = <T>(schema: z.ZodType<T>, kind: string) => objects.filter((o) => o.kind === kind).map((o) => schema.parse(o));
const configData = ofKind(configMap, 'ConfigMap').find((c) => c.metadata.name === 'mailroom-config')!.data;
const mailroomWorkloads = ofKind(workload, 'Deployment')
  .concat(ofKind(workload, 'Job'))
  .filter((w) => w.spec.template.spec.containers.some((c) => c.image.startsWith('mailroom:')));
const nats = ofKind(workload, 'StatefulSet').find((w) => w.metadata.name === 'nats')!;

const matches = (selector: Record<string, string>, podLabels: Record<string, string>) => Object.entries(selector).every(([k, v]) => podLabels[k] === v);
const mountOf = (tpl: z.infer<typeof podTemplate>, path: string) =>
  tpl.spec.containers.flatMap((c) => c.volumeMounts ?? []).find((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`));
/** The Secret key a file path of the pod reads, through its mount and the volume's items. */
function secretFileAt(tpl: z.infer<typeof podTemplate>, path: string): { secret: string; key: string; readOnly: boolean } | undefined {
  const m = mountOf(tpl, path);
  const v = tpl.spec.volumes?.find((x) => x.name === m?.name);
  if (!m || !v?.secret) return undefined;
  const rel = posix.relative(m.mountPath, path);
  const item = v.secret.items ? v.secret.items.find((i) => i.path === rel) : { key: rel };
  return item && { secret: v.secret.secretName, key: item.key, readOnly: m.readOnly === true };
}
/** A NATS configuration's setting, from its text (one per line in our files). */
const setting = (conf: string, name: string) => new RegExp(`^\\s*${name}\\s*[:=]?\\s*(\\S+)\\s*$`, 'm').exec(conf)?.[1];
/** The `cluster {}` block of a NATS configuration. */
const clusterBlock = (conf: string) => /^cluster \{$([\s\S]*?)^\}$/m.exec(conf)?.[1] ?? '';
const routeSetting = (name: string) => setting(clusterBlock(read('deploy/nats.conf')), name);
const routesOf = (conf: string) => [...clusterBlock(conf).matchAll(/nats-route:\/\/(\S+)/g)].map((m) => m[1]);

describe('deploy/k8s', () => {
  it('applies every manifest but the Secret template', () => {
    expect([...kustomization.resources].sort()).toEqual(k8sFiles.filter((f) => f !== 'kustomization.yaml' && f !== 'secret.example.yaml').sort());
  });

  it('keeps the copy of nats.conf in nats.yaml the same as deploy/nats.conf', () => {
    expect(ofKind(configMap, 'ConfigMap').find((c) => c.metadata.name === 'nats-config')?.data['nats.conf']).toBe(read('deploy/nats.conf'));
  });

  it('gives NATS its TLS files and the operator include from their Secrets, at the paths nats.conf names', () => {
    const conf = read('deploy/nats.conf');
    const tpl = nats.spec.template;
    const args = tpl.spec.containers[0]!.args ?? [];
    const confPath = args[args.indexOf('--config') + 1]!;
    expect(mountOf(tpl, confPath)).toMatchObject({ readOnly: true });
    expect(secretFileAt(tpl, setting(conf, 'cert_file')!)).toEqual({ secret: 'nats-tls', key: 'tls.crt', readOnly: true });
    expect(secretFileAt(tpl, setting(conf, 'key_file')!)).toEqual({ secret: 'nats-tls', key: 'tls.key', readOnly: true });
    const include = posix.join(posix.dirname(confPath), setting(conf, 'include')!);
    expect(secretFileAt(tpl, include)).toEqual({ secret: 'mailroom-nats-auth', key: 'nats-auth.conf', readOnly: true });
  });

  it('keeps NATS monitoring on the loopback, out of every Service and port list, probed from inside the pod', () => {
    expect(setting(read('deploy/nats.conf'), 'http')).toMatch(/^127\.0\.0\.1:\d+$/);
    const monitor = Number(setting(read('deploy/nats.conf'), 'http')!.split(':')[1]);
    for (const s of ofKind(service, 'Service')) expect(s.spec.ports.map((p) => p.port)).not.toContain(monitor);
    const c = nats.spec.template.spec.containers[0]!;
    expect((c.ports ?? []).map((p) => p.containerPort)).toEqual([4222, Number(routeSetting('port'))]);
    for (const probe of [c.startupProbe, c.livenessProbe, c.readinessProbe]) expect(probe).toEqual(expect.objectContaining({ exec: expect.anything() }));
  });

  it('points every client at NATS over TLS with the CA, and at its credentials folder', () => {
    expect(configData.NATS_URL).toMatch(/^tls:\/\/nats:4222$/);
    expect(configData.NATS_TLS_CA_FILE).toBeTruthy();
    expect(configData.NATS_CREDENTIALS_DIR).toBeTruthy();
  });

  it('gives each workload of the image its own identity: its Secret, its .creds, .seal-key and .subject-keys only (and seal-master.key to the gateway), read-only', () => {
    const dir = configData.NATS_CREDENTIALS_DIR!;
    const seen = mailroomWorkloads.map((w) => {
      const identity = w.metadata.labels?.['app.kubernetes.io/component'] ?? '';
      const tpl = w.spec.template;
      expect(tpl.spec.containers.find((c) => c.image.startsWith('mailroom:'))?.envFrom).toContainEqual({ configMapRef: { name: 'mailroom-config' } });
      for (const file of busFilesOf(identity)) expect(secretFileAt(tpl, `${dir}/${file}`)).toEqual({ secret: `mailroom-bus-${identity}`, key: file, readOnly: true });
      const bus = tpl.spec.volumes!.find((v) => v.name === mountOf(tpl, dir)!.name)!;
      expect(bus.secret?.items?.map((i) => i.key).sort()).toEqual(busFilesOf(identity));
      // Nothing of another identity's anywhere in the workload, nor bus-master.key, nor the master seal key but in the gateway's.
      const raw = objects.find((o) => o.kind === w.kind && o.metadata.name === w.metadata.name);
      expect([identity, foreignBusFiles(identity, raw)]).toEqual([identity, []]);
      // The CA alone out of the server's Secret, never its key.
      expect(secretFileAt(tpl, configData.NATS_TLS_CA_FILE!)).toEqual({ secret: 'nats-tls', key: 'ca.crt', readOnly: true });
      const ca = tpl.spec.volumes!.find((v) => v.name === mountOf(tpl, configData.NATS_TLS_CA_FILE!)!.name)!;
      expect(ca.secret?.items?.map((i) => i.key)).toEqual(['ca.crt']);
      return identity;
    });
    expect(seen.sort()).toEqual(IDENTITIES);
  });

  it('admits to NATS only Mailroom’s pods, on the client port, and the NATS pods alone on the route port', () => {
    const policy = ofKind(networkPolicy, 'NetworkPolicy').find((p) => matches(p.spec.podSelector.matchLabels, nats.spec.template.metadata.labels));
    expect(policy?.spec.policyTypes).toContain('Ingress');
    expect(policy?.spec.ingress).toHaveLength(2);
    const [rule, routes] = policy!.spec.ingress;
    expect(routes!.ports).toEqual([{ protocol: 'TCP', port: Number(routeSetting('port')) }]);
    expect((routes!.from ?? []).map((f) => f.podSelector?.matchLabels)).toEqual([nats.spec.template.metadata.labels]);
    expect(rule!.ports).toEqual([{ protocol: 'TCP', port: 4222 }]);
    const selectors = (rule!.from ?? []).map((f) => f.podSelector?.matchLabels);
    expect(selectors).toHaveLength(1);
    for (const w of mailroomWorkloads) expect(matches(selectors[0]!, w.spec.template.metadata.labels)).toBe(true);
    expect(matches(selectors[0]!, nats.spec.template.metadata.labels)).toBe(false);
  });

  it('admits to an in-namespace PostgreSQL only Mailroom’s pods and its own, on 5432', () => {
    const policy = ofKind(networkPolicy, 'NetworkPolicy').find((p) => p.metadata.name === 'postgresql')!;
    const [rule] = policy.spec.ingress;
    expect(rule!.ports).toEqual([{ protocol: 'TCP', port: 5432 }]);
    const selectors = (rule!.from ?? []).map((f) => f.podSelector?.matchLabels ?? {});
    expect(selectors).toEqual(expect.arrayContaining([policy.spec.podSelector.matchLabels]));
    for (const w of mailroomWorkloads) expect(selectors.some((s) => matches(s, w.spec.template.metadata.labels))).toBe(true);
    expect(selectors.some((s) => matches(s, nats.spec.template.metadata.labels))).toBe(false);
  });

  it('runs NATS as a cluster: one route per node of the StatefulSet, over TLS checked both ways, one node per machine, one down at a time', () => {
    const raw = z
      .object({
        spec: z.object({
          replicas: z.number(),
          serviceName: z.string(),
          podManagementPolicy: z.string(),
          template: z.object({ spec: z.object({ affinity: z.object({ podAntiAffinity: z.object({ requiredDuringSchedulingIgnoredDuringExecution: z.array(z.object({ topologyKey: z.string(), labelSelector: z.object({ matchLabels: labels }) })) }) }) }) }),
        }),
      })
      .parse(objects.find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'nats'));
    const n = raw.spec.replicas;
    expect(n).toBe(3);
    expect(raw.spec.podManagementPolicy).toBe('Parallel');
    const port = routeSetting('port');
    expect(routesOf(read('deploy/nats.conf'))).toEqual(Array.from({ length: n }, (_, i) => `nats-${i}.${raw.spec.serviceName}.mailroom.svc.cluster.local:${port}`));
    const headless = ofKind(service, 'Service').find((x) => x.metadata.name === raw.spec.serviceName)!;
    expect(headless.spec.ports).toContainEqual(expect.objectContaining({ port: Number(port), targetPort: 'cluster' }));
    const tls = clusterBlock(read('deploy/nats.conf'));
    expect(setting(tls, 'verify')).toBe('true');
    expect(secretFileAt(nats.spec.template, setting(tls, 'ca_file')!)).toEqual({ secret: 'nats-tls', key: 'ca.crt', readOnly: true });
    const [anti] = raw.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    expect(anti?.topologyKey).toBe('kubernetes.io/hostname');
    expect(matches(anti!.labelSelector.matchLabels, nats.spec.template.metadata.labels)).toBe(true);
    // The migration Job makes every stream with one replica per node.
    expect(configData.NATS_STREAM_REPLICAS).toBe(String(n));
  });

  it('gives NATS and every Mailroom Deployment probes, a grace period and a disruption budget of one', () => {
    const pdbs = objects
      .filter((o) => o.kind === 'PodDisruptionBudget')
      .map((o) => z.object({ spec: z.object({ maxUnavailable: z.number(), selector: z.object({ matchLabels: labels }) }) }).parse(o).spec);
    const deployments = objects.filter((o) => o.kind === 'Deployment');
    expect(deployments.length).toBe(IDENTITIES.length - 1);
    for (const d of [...deployments, objects.find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'nats')!]) {
      const w = z
        .object({ metadata: z.object({ name: z.string() }), spec: z.object({ template: z.object({ metadata: z.object({ labels }), spec: z.object({ terminationGracePeriodSeconds: z.number().min(30), containers: z.array(container) }) }) }) })
        .parse(d);
      const main = w.spec.template.spec.containers[0]!;
      expect([w.metadata.name, Boolean(main.livenessProbe), Boolean(main.readinessProbe)]).toEqual([w.metadata.name, true, true]);
      const budgets = pdbs.filter((p) => matches(p.selector.matchLabels, w.spec.template.metadata.labels));
      expect([w.metadata.name, budgets.map((b) => b.maxUnavailable)]).toEqual([w.metadata.name, [1]]);
    }
  });

  it('offers autoscalers for the gateway, mail-ingest and webhooks as a Component that frees their replica counts', () => {
    const component = z
      .object({ kind: z.literal('Component'), resources: z.array(z.string()), patches: z.array(z.object({ target: z.object({ kind: z.literal('Deployment'), name: z.string() }), patch: z.string() })) })
      .parse(parse(read('deploy/k8s/autoscaling/kustomization.yaml')));
    const hpas = component.resources.flatMap((f) => parseAllDocuments(read(`deploy/k8s/autoscaling/${f}`)).map((d) => d.toJS()));
    const targets = hpas.map((h) => z.object({ kind: z.literal('HorizontalPodAutoscaler'), spec: z.object({ scaleTargetRef: z.object({ kind: z.literal('Deployment'), name: z.string() }), minReplicas: z.number().min(2) }) }).parse(h).spec.scaleTargetRef.name);
    expect(targets.sort()).toEqual(['gateway', 'mail-ingest', 'webhooks']);
    for (const t of targets) expect(objects.some((o) => o.kind === 'Deployment' && o.metadata.name === t)).toBe(true);
    expect(component.patches.map((p) => [p.target.name, parse(p.patch)]).sort()).toEqual(targets.map((t) => [t, [{ op: 'remove', path: '/spec/replicas' }]]));
  });

  it('points every Mailroom pod at the OTLP collector from the ConfigMap, and has each Deployment scraped at /metrics on its health port', () => {
    expect(new URL(configData.OTEL_EXPORTER_OTLP_ENDPOINT!).port).toBe('4318');
    for (const w of mailroomWorkloads) {
      const main = w.spec.template.spec.containers[0]!;
      expect([w.metadata.name, main.envFrom?.some((e) => e.configMapRef?.name === 'mailroom-config')]).toEqual([w.metadata.name, true]);
      // Nothing overrides it per workload.
      expect([w.metadata.name, JSON.stringify(w).includes('OTEL_EXPORTER_OTLP_ENDPOINT')]).toEqual([w.metadata.name, false]);
    }
    const deployments = mailroomWorkloads.filter((w) => w.kind === 'Deployment');
    expect(deployments.length).toBe(IDENTITIES.length - 1);
    for (const d of deployments) {
      const health = d.spec.template.spec.containers[0]!.ports?.find((p) => p.name === 'health')?.containerPort;
      expect([d.metadata.name, String(health)]).toEqual([d.metadata.name, configData.HEALTH_PORT]);
      expect([d.metadata.name, d.spec.template.metadata.annotations]).toEqual([d.metadata.name, { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(health), 'prometheus.io/path': '/metrics' }]);
    }
  });

  it('documents DATABASE_URL with TLS and the server checked', () => {
    expect(read('deploy/k8s/secret.example.yaml')).toMatch(/DATABASE_URL: "postgres:\/\/[^"]*\?sslmode=verify-full"/);
  });
});

describe('docker-compose.yml', () => {
  const subpathMount = z.object({ type: z.literal('volume'), source: z.string(), target: z.string(), read_only: z.boolean().optional(), volume: z.object({ subpath: z.string() }) });
  const composeService = z.object({
    image: z.string().optional(),
    command: z.array(z.string()).optional(),
    environment: z.record(z.string(), z.string()).optional(),
    volumes: z.array(z.union([z.string(), subpathMount, z.object({ type: z.string(), source: z.string(), target: z.string() })])).optional(),
    ports: z.array(z.string()).optional(),
    depends_on: z.record(z.string(), z.object({ condition: z.string() })).optional(),
  });
  const rawCompose = z.object({ services: z.record(z.string(), z.unknown()) }).parse(parse(read('docker-compose.yml'), { merge: true }));
  const compose = z.object({ services: z.record(z.string(), composeService) }).parse(rawCompose);
  const services = Object.entries(compose.services);
  /** The identity a container of the image runs as: its service's, or migrate. */
  const identityOf = (command: string[] = []) => (command.includes('migrate') ? 'migrate' : /^services\/([a-z-]+)\/dist\/main\.js$/.exec(command[1] ?? '')?.[1]);
  const mailroom = services.filter(([name, s]) => s.image === 'mailroom:local' && name !== 'bus-credentials');

  it('mounts the credentials volume whole in the one-shot that writes it, and nowhere else', () => {
    for (const [name, s] of services) {
      const whole = (s.volumes ?? []).filter((v) => (typeof v === 'string' ? v.startsWith('bus-credentials:') : v.source === 'bus-credentials' && !('volume' in v)));
      expect([name, whole.length]).toEqual([name, name === 'bus-credentials' ? 1 : 0]);
    }
    const oneShot = compose.services['bus-credentials']!;
    expect(oneShot.command?.join(' ')).toMatch(/test -f \S+\/nats-auth\.conf \|\| exec node apps\/all-in-one\/dist\/main\.js bus-credentials /);
  });

  it('gives each container of the image its own .creds, .seal-key and .subject-keys (and seal-master.key to the gateway), read-only, in NATS_CREDENTIALS_DIR', () => {
    const seen = mailroom.map(([name, s]) => {
      const identity = identityOf(s.command) ?? '';
      const dir = s.environment?.NATS_CREDENTIALS_DIR;
      expect([name, dir]).toEqual([name, expect.stringMatching(/^\//)]);
      const files = (s.volumes ?? []).map((v) => subpathMount.parse(v));
      expect(files.map((f) => [f.source, f.volume.subpath, f.target, f.read_only]).sort()).toEqual(busFilesOf(identity).map((file) => ['bus-credentials', file, `${dir}/${file}`, true]).sort());
      // Nothing of another identity's anywhere in the container, nor bus-master.key, nor the master seal key but in the gateway's.
      expect([name, foreignBusFiles(identity, rawCompose.services[name])]).toEqual([name, []]);
      expect(s.depends_on).toHaveProperty(identity === 'migrate' ? 'nats' : 'migrate');
      return identity;
    });
    expect(seen.sort()).toEqual(IDENTITIES);
  });

  it('has NATS include nats-auth.conf from the volume, where nats-compose.conf looks for it', () => {
    const s = compose.services.nats!;
    const confPath = s.command![s.command!.indexOf('--config') + 1]!;
    expect(s.volumes).toContain(`./deploy/\${MAILROOM_NATS_CONF:-nats-compose.conf}:${confPath}:ro`);
    const include = posix.join(posix.dirname(confPath), setting(read('deploy/nats-compose.conf'), 'include')!);
    expect(s.volumes).toContainEqual({ type: 'volume', source: 'bus-credentials', target: include, read_only: true, volume: { subpath: 'nats-auth.conf' } });
    expect(s.depends_on?.['bus-credentials']).toEqual({ condition: 'service_completed_successfully' });
    expect(setting(read('deploy/nats-compose.conf'), 'http')).toMatch(/^127\.0\.0\.1:/);
  });

  it('has a `cluster` profile: three NATS nodes routed to each other, every service told all three, streams at 3 replicas', () => {
    const profiles = z.record(z.string(), z.object({ profiles: z.array(z.string()).optional(), environment: z.record(z.string(), z.string()).optional() }).loose()).parse(rawCompose.services);
    const nodes = ['nats', ...Object.keys(profiles).filter((name) => profiles[name]!.profiles?.includes('cluster'))];
    expect(nodes).toEqual(['nats', 'nats-2', 'nats-3']);
    const conf = read('deploy/nats-compose-cluster.conf');
    expect(routesOf(conf)).toEqual(nodes.map((n) => `${n}:${setting(clusterBlock(conf), 'port')}`));
    // Each node its own server name (JetStream ties its state to it), and its own volume.
    const names = nodes.map((n) => profiles[n]!.environment?.SERVER_NAME);
    expect(new Set(names).size).toBe(3);
    for (const n of ['nats-2', 'nats-3']) expect(compose.services[n]!.volumes).toContain(`./deploy/nats-compose-cluster.conf:/etc/nats/config/nats.conf:ro`);
    const env = Object.fromEntries(
      read('deploy/cluster.env')
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => l.split('=', 2) as [string, string]),
    );
    expect(env).toEqual({ MAILROOM_NATS_CONF: 'nats-compose-cluster.conf', MAILROOM_NATS_URL: nodes.map((n) => `nats://${n}:4222`).join(','), NATS_STREAM_REPLICAS: '3' });
    expect(compose.services.migrate!.environment).toMatchObject({ NATS_URL: '${MAILROOM_NATS_URL:-nats://nats:4222}', NATS_STREAM_REPLICAS: '${NATS_STREAM_REPLICAS:-1}' });
  });

  it('has an `observability` profile: a collector taking OTLP, traces to Jaeger, metrics to Prometheus, which scrapes every service’s /metrics; images pinned', () => {
    const profiles = z.record(z.string(), z.object({ profiles: z.array(z.string()).optional() }).loose()).parse(rawCompose.services);
    const observability = Object.keys(profiles).filter((name) => profiles[name]!.profiles?.includes('observability'));
    expect(observability.sort()).toEqual(['jaeger', 'otel-collector', 'prometheus']);
    for (const name of observability) {
      const s = compose.services[name]!;
      expect([name, s.image]).toEqual([name, expect.stringMatching(/^[\w./-]+:v?\d+\.\d+\.\d+$/)]);
      for (const p of s.ports ?? []) expect([name, p]).toEqual([name, expect.stringMatching(/^127\.0\.0\.1:/)]);
    }
    /** The host file a service mounts at `target`, read. */
    const mounted = (service: string, target: string) => {
      const bind = (compose.services[service]!.volumes ?? []).find((v): v is string => typeof v === 'string' && v.split(':')[1] === target);
      expect([service, target, bind]).toEqual([service, target, expect.stringMatching(/^\.\/deploy\//)]);
      return parse(read(bind!.split(':')[0]!));
    };
    const collectorService = compose.services['otel-collector']!;
    const collector = z
      .object({
        receivers: z.object({ otlp: z.object({ protocols: z.object({ http: z.object({ endpoint: z.string() }), grpc: z.object({ endpoint: z.string() }) }) }) }),
        exporters: z.record(z.string(), z.object({ endpoint: z.string() }).loose()),
        service: z.object({ pipelines: z.object({ traces: z.object({ receivers: z.array(z.string()), exporters: z.array(z.string()) }), metrics: z.object({ receivers: z.array(z.string()), exporters: z.array(z.string()) }) }) }),
      })
      .parse(mounted('otel-collector', collectorService.command![0]!.replace('--config=', '')));
    const otlpHttpPort = collector.receivers.otlp.protocols.http.endpoint.split(':')[1];
    expect(otlpHttpPort).toBe('4318');
    const { traces, metrics } = collector.service.pipelines;
    expect([traces.receivers, metrics.receivers]).toEqual([['otlp'], ['otlp']]);
    // Traces to Jaeger's OTLP port, metrics offered on a port Prometheus scrapes.
    expect(traces.exporters.map((e) => collector.exporters[e]!.endpoint)).toEqual(['jaeger:4317']);
    expect(metrics.exporters).toEqual(['prometheus']);
    const offered = collector.exporters.prometheus!.endpoint.split(':')[1];
    const prometheus = z
      .object({ scrape_configs: z.array(z.object({ job_name: z.string(), metrics_path: z.string().optional(), static_configs: z.array(z.object({ targets: z.array(z.string()), labels: labels.optional() })) })) })
      .parse(mounted('prometheus', compose.services.prometheus!.command![0]!.replace('--config.file=', '')));
    const job = (name: string) => prometheus.scrape_configs.find((j) => j.job_name === name)!;
    expect(job('otel-collector').static_configs.flatMap((c) => c.targets)).toEqual([`otel-collector:${offered}`]);
    // Every service (every container of the image but the one-shots), at /metrics on its health port, labelled with its name.
    const scraped = mailroom.filter(([name]) => name !== 'migrate').map(([name, s]) => [`${name}:${s.environment?.HEALTH_PORT}`, name]);
    expect(job('mailroom').metrics_path).toBe('/metrics');
    expect(job('mailroom').static_configs.flatMap((c) => c.targets.map((t) => [t, c.labels?.service])).sort()).toEqual(scraped.sort());
    expect(scraped.length).toBe(IDENTITIES.length - 1);
    // The services export to the collector only with deploy/observability.env: empty (off) without it.
    for (const [name, s] of mailroom) expect([name, s.environment?.OTEL_EXPORTER_OTLP_ENDPOINT]).toEqual([name, '${OTEL_EXPORTER_OTLP_ENDPOINT:-}']);
    const env = read('deploy/observability.env')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    expect(env).toEqual([`OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector:${otlpHttpPort}`]);
    expect(collectorService.ports).toContain(`127.0.0.1:${otlpHttpPort}:${otlpHttpPort}`);
  });

  it('publishes the plain-HTTP API on the host’s loopback only', () => {
    expect(compose.services.gateway?.ports).toEqual(['127.0.0.1:8080:8080']);
  });
});

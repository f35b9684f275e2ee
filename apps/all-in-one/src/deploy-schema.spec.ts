/**
 * The shipped deployments checked against the schemas their tools publish. Every object
 * deploy/k8s renders, against the Kubernetes API's own OpenAPI schemas (kubernetes-models: one
 * model class per apiVersion and kind, whose validate() runs the schema, generated from
 * Kubernetes v1.36): types, required fields, enums and formats such as quantities, what
 * kubeconform checks without -strict; no cluster and no kubectl here. docker-compose.yml,
 * against the Compose Specification's JSON schema (as dclint ships it), which also refuses
 * unknown keys. deploy.spec.ts checks what the schemas cannot: that the objects fit together.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DCLinter } from 'dclint';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';

const root = resolve(__dirname, '../../..');
const read = (file: string) => readFileSync(resolve(root, file), 'utf8');

/** The kinds the manifests may use, each with its model: a kind not listed here fails the check. */
const MODELS = [Namespace, ConfigMap, Secret, Service, Deployment, StatefulSet, Job, PodDisruptionBudget, HorizontalPodAutoscaler, NetworkPolicy];
const modelOf = (apiVersion: unknown, kind: unknown) => MODELS.find((m) => m.apiVersion === apiVersion && m.kind === kind);

/** Why the schemas refuse an object, or undefined when they accept it. */
function refusal(object: unknown): string | undefined {
  const typed = z.object({ apiVersion: z.string(), kind: z.string() }).loose().safeParse(object);
  if (!typed.success) return `no apiVersion and kind: ${typed.error.message}`;
  const Model = modelOf(typed.data.apiVersion, typed.data.kind);
  if (!Model) return `no schema for ${typed.data.apiVersion} ${typed.data.kind}`;
  try {
    new Model(object as never).validate();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The objects of a kustomization's (or Component's) resource files, with where they come from. */
function objectsOf(dir: string) {
  const { resources } = z.object({ resources: z.array(z.string()) }).parse(parse(read(`${dir}/kustomization.yaml`)));
  return resources.flatMap((file) =>
    parseAllDocuments(read(`${dir}/${file}`)).map((doc, i) => {
      if (doc.errors.length) throw new Error(`${dir}/${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const object: unknown = doc.toJS();
      const name = z.object({ kind: z.string(), metadata: z.object({ name: z.string() }) }).safeParse(object);
      return { where: `${dir}/${file}#${i} ${name.success ? `${name.data.kind}/${name.data.metadata.name}` : '?'}`, object };
    }),
  );
}

const rendered = objectsOf('deploy/k8s');
const autoscaling = objectsOf('deploy/k8s/autoscaling');
/** The Secret template is applied by hand, after filling in: it must be valid too. */
const secretTemplate = parseAllDocuments(read('deploy/k8s/secret.example.yaml')).map((doc) => ({ where: 'deploy/k8s/secret.example.yaml', object: doc.toJS() as unknown }));
const refusals = (objects: { where: string; object: unknown }[]) => objects.map(({ where, object }) => [where, refusal(object)]).filter(([, why]) => why !== undefined);

/** A copy of a rendered object, changed by `edit`. */
function brokenCopy(kind: string, name: string, edit: (o: Record<string, any>) => void): unknown {
  const found = rendered.find(({ object }) => z.object({ kind: z.literal(kind), metadata: z.object({ name: z.literal(name) }) }).safeParse(object).success);
  if (!found) throw new Error(`no ${kind}/${name} in deploy/k8s`);
  const copy = structuredClone(found.object) as Record<string, any>;
  edit(copy);
  return copy;
}

describe('deploy/k8s against the Kubernetes schemas', () => {
  it('renders the objects it is known to (43, and 3 autoscalers)', () => {
    expect([rendered.length, autoscaling.length]).toEqual([43, 3]);
  });

  it('has every object of kustomization.yaml valid for its kind', () => {
    expect(refusals(rendered)).toEqual([]);
  });

  it('has every object of the autoscaling Component valid for its kind', () => {
    expect(refusals(autoscaling)).toEqual([]);
  });

  it('has the Secret template valid as it is shipped', () => {
    expect(secretTemplate).toHaveLength(1);
    expect(refusals(secretTemplate)).toEqual([]);
  });

  it('refuses a kind it has no schema for, or one in an API version no longer served', () => {
    // A kind with no model, or one in a removed API version, is refused rather than passed unchecked.
    expect(refusal({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'x' } })).toBe('no schema for v1 ServiceAccount');
    expect(refusal({ apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'x' } })).toBe('no schema for policy/v1beta1 PodDisruptionBudget');
    expect(refusal({ kind: 'Deployment', metadata: { name: 'x' } })).toMatch(/^no apiVersion and kind/);
  });

  it('refuses a broken copy: a container port as a string, a missing required field, an unknown enum value, a malformed quantity', () => {
    expect(refusal(brokenCopy('Deployment', 'gateway', () => {}))).toBeUndefined();
    expect(
      refusal(
        brokenCopy('Deployment', 'gateway', (d) => {
          d.spec.template.spec.containers[0].ports[0].containerPort = '8080';
        }),
      ),
    ).toMatch(/containers\/0\/ports\/0\/containerPort must be integer/);
    expect(
      refusal(
        brokenCopy('Deployment', 'gateway', (d) => {
          delete d.spec.selector;
        }),
      ),
    ).toMatch(/spec must have required property selector/);
    expect(
      refusal(
        brokenCopy('Deployment', 'gateway', (d) => {
          delete d.spec.template.spec.containers[0].name;
        }),
      ),
    ).toMatch(/containers\/0 must have required property name/);
    expect(
      refusal(
        brokenCopy('Service', 'nats', (s) => {
          s.spec.ports[0].protocol = 'tcp';
        }),
      ),
    ).toMatch(/ports\/0\/protocol must be equal to one of the allowed values/);
    expect(
      refusal(
        brokenCopy('Deployment', 'gateway', (d) => {
          d.spec.template.spec.containers[0].resources.requests.cpu = 'half a core';
        }),
      ),
    ).toMatch(/resources\/requests\/cpu must match format "quantity"/);
    expect(
      refusal(
        brokenCopy('StatefulSet', 'nats', (s) => {
          s.spec.replicas = '3';
        }),
      ),
    ).toMatch(/spec\/replicas must be integer/);
  });

  it('does not refuse an unknown field: the API’s schemas leave objects open, and the API server refuses it at apply time (strict field validation)', () => {
    // Said here so no one takes this check for kubeconform's -strict.
    expect(
      refusal(
        brokenCopy('Deployment', 'gateway', (d) => {
          d.spec.template.spec.containers[0].readinesProbe = d.spec.template.spec.containers[0].readinessProbe;
        }),
      ),
    ).toBeUndefined();
  });
});

describe('docker-compose.yml against the Compose Specification', () => {
  // dclint's style rules are not ours: only its YAML and schema checks count here.
  const linter = new DCLinter({ rules: {}, quiet: true, debug: false, exclude: [] });
  const SCHEMA_CHECKS = ['invalid-yaml', 'invalid-schema', 'unknown-error'];
  /** dclint's types do not resolve under nodenext (extensionless imports in its .d.ts): its LintResult, as far as used here. */
  type LintResult = { messages: { rule: string; message: string }[] };
  const schemaErrors = (file: string) =>
    (linter.lintFiles([file], false) as LintResult[])
      .flatMap((r) => r.messages)
      .filter((m) => SCHEMA_CHECKS.includes(m.rule))
      .map((m) => m.message);
  /** The schema's errors for a copy of docker-compose.yml changed by `edit`. */
  function brokenCompose(edit: (c: Record<string, any>) => void): string[] {
    const copy = parse(read('docker-compose.yml'), { merge: true }) as Record<string, any>;
    edit(copy);
    const dir = mkdtempSync(join(tmpdir(), 'compose-schema-'));
    try {
      writeFileSync(join(dir, 'docker-compose.yml'), stringify(copy));
      return schemaErrors(join(dir, 'docker-compose.yml'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('is valid, every profile included', () => {
    expect(schemaErrors(resolve(root, 'docker-compose.yml'))).toEqual([]);
  });

  it('refuses a broken copy: an unknown key in a service or at the top, an unknown dependency condition, a string for a list', () => {
    expect(brokenCompose(() => {})).toEqual([]);
    expect(
      brokenCompose((c) => {
        c.services.gateway.restart_policy = 'always';
      }),
    ).toEqual([expect.stringMatching(/instancePath="\/services\/gateway".*must NOT have additional properties/)]);
    expect(
      brokenCompose((c) => {
        c.services.gateway.depends_on.migrate.condition = 'service_done';
      }),
    ).toEqual([expect.stringMatching(/depends_on/)]);
    expect(
      brokenCompose((c) => {
        c.services.gateway.cap_drop = 'ALL';
      }),
    ).toEqual([expect.stringMatching(/instancePath="\/services\/gateway\/cap_drop".*must be array/)]);
    expect(
      brokenCompose((c) => {
        c.volume = c.volumes;
      }),
    ).toEqual([expect.stringMatching(/must NOT have additional properties/)]);
  });
});

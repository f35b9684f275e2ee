/**
 * Every object of deploy/k8s's resource files (and the autoscaling Component's, and the Secret template)
 * against the Kubernetes API's own definitions, from kubernetes-models (generated from the
 * OpenAPI of Kubernetes v1.36), in two passes, together what `kubeconform -strict` checks; no
 * cluster and no kubectl here:
 * - the schema: each apiVersion and kind's model class validates the object (types, required
 *   fields, enums, formats such as quantities). A kind with no model is refused.
 * - no unknown field: the API's schemas leave objects open (the API server refuses an unknown
 *   field at apply time), so each object is also typed as its kind's TypeScript interface, in a
 *   source file only the compiler sees, whose excess property check refuses a field the kind
 *   does not define (a misspelt `readinesProbe` would otherwise pass unnoticed).
 * deploy.spec.ts checks what a schema cannot: that the objects fit together.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { parse, parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';

const root = resolve(__dirname, '../../..');
const read = (file: string) => readFileSync(resolve(root, file), 'utf8');
type Located = { where: string; object: unknown };

/** The kinds the manifests may use, each with its model: a kind not listed here is refused. */
const MODELS = [Namespace, ConfigMap, Secret, Service, Deployment, StatefulSet, Job, PodDisruptionBudget, HorizontalPodAutoscaler, NetworkPolicy];
const typeMeta = z.object({ apiVersion: z.string(), kind: z.string() }).loose();

/** Why the schema refuses an object, or undefined when it accepts it. */
function refusal(object: unknown): string | undefined {
  const typed = typeMeta.safeParse(object);
  if (!typed.success) return `no apiVersion and kind: ${typed.error.message}`;
  const Model = MODELS.find((m) => m.apiVersion === typed.data.apiVersion && m.kind === typed.data.kind);
  if (!Model) return `no schema for ${typed.data.apiVersion} ${typed.data.kind}`;
  try {
    new Model(object as never).validate();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
const refusals = (objects: Located[]) => objects.map(({ where, object }) => [where, refusal(object)]).filter(([, why]) => why !== undefined);

/**
 * What TypeScript says of the objects typed as their kinds' interfaces (`I<kind>` of
 * kubernetes-models/<apiVersion>): a field the kind does not define, or of the wrong type. It
 * stops at an object's first error. The source is never written: the compiler host serves it.
 */
function typeErrors(objects: Located[]): string[] {
  const file = resolve(__dirname, 'manifests.generated.ts');
  const aliases = new Map<string, string>();
  const starts: number[] = [];
  const lines: string[] = [];
  objects.forEach(({ object }, i) => {
    const { apiVersion, kind } = typeMeta.parse(object);
    if (!aliases.has(apiVersion)) aliases.set(apiVersion, `m${aliases.size}`);
    starts.push(lines.length);
    lines.push(...`export const o${i}: ${aliases.get(apiVersion)}.I${kind} = ${JSON.stringify(object, null, 1)};`.split('\n'));
  });
  // Imports last, so that line n is line n of the objects.
  for (const [apiVersion, alias] of aliases) lines.push(`import type * as ${alias} from 'kubernetes-models/${apiVersion}';`);
  const options: ts.CompilerOptions = { strict: true, noEmit: true, skipLibCheck: true, types: [], target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists } = host;
  host.getSourceFile = (name, language, ...rest) => (name === file ? ts.createSourceFile(name, lines.join('\n'), language) : getSourceFile(name, language, ...rest));
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  const source = program.getSourceFile(file)!;
  return ts.getPreEmitDiagnostics(program, source).map((d) => {
    const line = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line;
    const at = starts.findLastIndex((s) => s <= line);
    return `${objects[at]?.where ?? 'imports'}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

/**
 * The objects of a kustomization's (or Component's) resource files, with where they come from.
 * What kustomize does to them is not applied here: today `images` (a rename) and the
 * Component's patches (each removes a Deployment's `spec.replicas`), which cannot make an
 * object invalid. Any other transformer (generators, replacements, other patches) fails this
 * parse, so whoever adds one extends the check.
 */
function objectsOf(dir: string): Located[] {
  const removeReplicas = z.object({ target: z.object({ kind: z.literal('Deployment'), name: z.string() }), patch: z.literal('- op: remove\n  path: /spec/replicas') }).strict();
  const kustomization = z
    .object({ apiVersion: z.string(), kind: z.enum(['Kustomization', 'Component']), resources: z.array(z.string()), images: z.array(z.object({ name: z.string(), newName: z.string(), newTag: z.string() }).strict()).optional(), patches: z.array(removeReplicas).optional() })
    .strict();
  const { resources } = kustomization.parse(parse(read(`${dir}/kustomization.yaml`)));
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
/** The Secret template is applied by hand, once filled in: it must be valid as well. */
const secretTemplate: Located[] = parseAllDocuments(read('deploy/k8s/secret.example.yaml')).map((doc) => {
  if (doc.errors.length) throw new Error(`deploy/k8s/secret.example.yaml: ${doc.errors.map((e) => e.message).join('; ')}`);
  return { where: 'deploy/k8s/secret.example.yaml', object: doc.toJS() };
});
const everything = [...rendered, ...autoscaling, ...secretTemplate];

/** A copy of a rendered object, changed by `edit`. */
function brokenCopy(kind: string, name: string, edit: (o: Record<string, any>) => void): Record<string, any> {
  const found = rendered.find(({ object }) => z.object({ kind: z.literal(kind), metadata: z.object({ name: z.literal(name) }) }).safeParse(object).success);
  if (!found) throw new Error(`no ${kind}/${name} in deploy/k8s`);
  const copy = structuredClone(found.object) as Record<string, any>;
  edit(copy);
  return copy;
}

describe('deploy/k8s against the Kubernetes API’s definitions', () => {
  it('renders the objects it is known to (43, and 3 autoscalers, and the Secret template)', () => {
    expect([rendered.length, autoscaling.length, secretTemplate.length]).toEqual([43, 3, 1]);
  });

  it('has every object valid for its kind’s schema: kustomization.yaml’s, the autoscaling Component’s, the Secret template', () => {
    expect(refusals(everything)).toEqual([]);
  });

  it('has no field its kind does not define, nor one of the wrong type', () => {
    expect(typeErrors(everything)).toEqual([]);
  });

  it('refuses a kind it has no model for, or one in an API version no longer served', () => {
    expect(refusal({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'x' } })).toBe('no schema for v1 ServiceAccount');
    expect(refusal({ apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'x' } })).toBe('no schema for policy/v1beta1 PodDisruptionBudget');
    expect(refusal({ kind: 'Deployment', metadata: { name: 'x' } })).toMatch(/^no apiVersion and kind/);
  });

  it('refuses by schema a broken copy: a container port as a string, a missing required field, an unknown enum value, a malformed quantity', () => {
    expect(refusal(brokenCopy('Deployment', 'gateway', () => {}))).toBeUndefined();
    const refused = (kind: string, name: string, edit: (o: Record<string, any>) => void) => refusal(brokenCopy(kind, name, edit));
    expect(
      refused('Deployment', 'gateway', (d) => {
        d.spec.template.spec.containers[0].ports[0].containerPort = '8080';
      }),
    ).toMatch(/containers\/0\/ports\/0\/containerPort must be integer/);
    expect(
      refused('StatefulSet', 'nats', (s) => {
        s.spec.replicas = '3';
      }),
    ).toMatch(/spec\/replicas must be integer/);
    expect(
      refused('Deployment', 'gateway', (d) => {
        delete d.spec.selector;
      }),
    ).toMatch(/spec must have required property selector/);
    expect(
      refused('Deployment', 'gateway', (d) => {
        delete d.spec.template.spec.containers[0].name;
      }),
    ).toMatch(/containers\/0 must have required property name/);
    expect(
      refused('Service', 'nats', (s) => {
        s.spec.ports[0].protocol = 'tcp';
      }),
    ).toMatch(/ports\/0\/protocol must be equal to one of the allowed values/);
    expect(
      refused('Deployment', 'gateway', (d) => {
        d.spec.template.spec.containers[0].resources.requests.cpu = 'half a core';
      }),
    ).toMatch(/resources\/requests\/cpu must match format "quantity"/);
  });

  it('refuses a broken copy with an unknown field, which the schema alone lets through', () => {
    const misspelt = brokenCopy('Deployment', 'gateway', (d) => {
      const [main] = d.spec.template.spec.containers;
      main.readinesProbe = main.readinessProbe;
      delete main.readinessProbe;
    });
    const extra = brokenCopy('PodDisruptionBudget', 'nats', (p) => {
      p.spec.maxUnavailabe = 1;
    });
    expect([refusal(misspelt), refusal(extra)]).toEqual([undefined, undefined]);
    expect(typeErrors([{ where: 'misspelt', object: misspelt }, { where: 'extra', object: extra }])).toEqual([
      expect.stringMatching(/^misspelt: .*'"readinesProbe"' does not exist in type 'IContainer'/),
      expect.stringMatching(/^extra: .*'"maxUnavailabe"' does not exist in type 'IPodDisruptionBudgetSpec'/),
    ]);
  });
});

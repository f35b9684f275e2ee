import path from 'node:path';

/** The repository's root, from src/ or dist/ of this package. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/** A file of a vendored public corpus (fixtures/corpora/<name>/...). */
export function corpusPath(name: string, ...parts: string[]): string {
  return path.join(REPO_ROOT, 'fixtures', 'corpora', name, ...parts);
}

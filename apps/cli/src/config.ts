/**
 * Where `mailroom login` keeps the API key and base URL: config.json in the user's config
 * directory (MAILROOM_CONFIG_DIR, else $XDG_CONFIG_HOME/mailroom, else ~/.config/mailroom;
 * %APPDATA%\mailroom on Windows), readable by its owner alone (0600, in a 0700 directory).
 * MAILROOM_API_KEY and MAILROOM_BASE_URL override the file.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface StoredConfig {
  api_key?: string;
  base_url?: string;
}

type Env = Record<string, string | undefined>;

export function configDir(env: Env, platform: NodeJS.Platform = process.platform, home: string = homedir()): string {
  if (env.MAILROOM_CONFIG_DIR) return env.MAILROOM_CONFIG_DIR;
  if (platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'mailroom');
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'mailroom');
}

export const configFile = (dir: string): string => join(dir, 'config.json');

/** The stored config; none (no file yet) is empty. A file that is not JSON is an error worth seeing. */
export function readConfig(file: string): StoredConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  const parsed = JSON.parse(text) as unknown;
  if (typeof parsed !== 'object' || parsed === null) return {};
  const { api_key, base_url } = parsed as Record<string, unknown>;
  return { ...(typeof api_key === 'string' ? { api_key } : {}), ...(typeof base_url === 'string' ? { base_url } : {}) };
}

/** Writes the config for its owner alone; an existing file's wider mode is narrowed too. */
export function writeConfig(dir: string, config: StoredConfig): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = configFile(dir);
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** The credentials a command uses: the environment over the file. */
export function resolveCredentials(env: Env, stored: StoredConfig): { apiKey: string | undefined; baseUrl: string | undefined } {
  return { apiKey: env.MAILROOM_API_KEY || stored.api_key, baseUrl: env.MAILROOM_BASE_URL || stored.base_url };
}

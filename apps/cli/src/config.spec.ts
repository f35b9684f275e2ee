import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configDir, configFile, readConfig, resolveCredentials, writeConfig } from './config';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailroom-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('configDir', () => {
  it('prefers MAILROOM_CONFIG_DIR, then XDG_CONFIG_HOME, then ~/.config; APPDATA on Windows', () => {
    expect(configDir({ MAILROOM_CONFIG_DIR: '/c' }, 'linux', '/home/u')).toBe('/c');
    expect(configDir({ XDG_CONFIG_HOME: '/x' }, 'linux', '/home/u')).toBe(join('/x', 'mailroom'));
    expect(configDir({}, 'linux', '/home/u')).toBe(join('/home/u', '.config', 'mailroom'));
    expect(configDir({ APPDATA: 'C:\\Users\\u\\AppData' }, 'win32', 'C:\\Users\\u')).toBe(join('C:\\Users\\u\\AppData', 'mailroom'));
  });
});

describe('the config file', () => {
  it('is empty before login', () => {
    expect(readConfig(configFile(join(dir, 'none')))).toEqual({});
  });

  it('stores the key and base URL for its owner alone (0600 in a 0700 directory)', () => {
    const home = join(dir, 'mailroom');
    const file = writeConfig(home, { api_key: 'mr_secret', base_url: 'http://api.test' });
    expect(readConfig(file)).toEqual({ api_key: 'mr_secret', base_url: 'http://api.test' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(home).mode & 0o777).toBe(0o700);
  });

  it('narrows a file that was readable by others when it is written again', () => {
    const file = configFile(dir);
    writeFileSync(file, '{}', { mode: 0o644 });
    writeConfig(dir, { api_key: 'mr_new' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('ignores fields of the wrong type, and refuses a file that is not JSON', () => {
    const file = configFile(dir);
    writeFileSync(file, JSON.stringify({ api_key: 7, base_url: 'http://b.test' }));
    expect(readConfig(file)).toEqual({ base_url: 'http://b.test' });
    writeFileSync(file, 'not json');
    expect(() => readConfig(file)).toThrow(SyntaxError);
  });
});

describe('resolveCredentials', () => {
  it('takes MAILROOM_API_KEY and MAILROOM_BASE_URL over the file', () => {
    const stored = { api_key: 'mr_file', base_url: 'http://file.test' };
    expect(resolveCredentials({}, stored)).toEqual({ apiKey: 'mr_file', baseUrl: 'http://file.test' });
    expect(resolveCredentials({ MAILROOM_API_KEY: 'mr_env', MAILROOM_BASE_URL: 'http://env.test' }, stored)).toEqual({ apiKey: 'mr_env', baseUrl: 'http://env.test' });
    expect(resolveCredentials({ MAILROOM_API_KEY: '' }, stored).apiKey).toBe('mr_file');
  });
});

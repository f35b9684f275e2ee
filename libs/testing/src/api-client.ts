/** A small HTTP client for driving the gateway the way a user does. */
import { randomBytes } from 'node:crypto';

export interface ApiResponse<T = any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string | undefined;
  headers?: Record<string, string>;
  /** Sent as is (no JSON encoding) when a string or Buffer. */
  raw?: string | Buffer;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly defaultToken?: string,
    /** Cookies the API set, sent back as a browser does (withCookies). */
    private readonly jar?: Map<string, string>,
  ) {}

  withToken(token: string): ApiClient {
    return new ApiClient(this.baseUrl, token, this.jar);
  }

  /** A client that keeps the cookies the API sets and sends them back, as one browser does. */
  withCookies(): ApiClient {
    return new ApiClient(this.baseUrl, this.defaultToken, new Map());
  }

  async request<T = any>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<ApiResponse<T>> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token ?? this.defaultToken;
    if (token) headers.authorization = `Bearer ${token}`;
    if (this.jar?.size) headers.cookie ??= [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let payload: string | Buffer | undefined;
    if (opts.raw !== undefined) payload = opts.raw;
    else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, ...(payload === undefined ? {} : { body: payload }) });
    for (const set of this.jar ? res.headers.getSetCookie() : []) {
      const [pair] = set.split(';');
      const at = pair!.indexOf('=');
      if (at > 0) this.jar!.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, opts?: RequestOptions) { // eslint-disable-line @typescript-eslint/no-explicit-any
    return this.request<T>('GET', path, undefined, opts);
  }
  post<T = any>(path: string, body?: unknown, opts?: RequestOptions) { // eslint-disable-line @typescript-eslint/no-explicit-any
    return this.request<T>('POST', path, body, opts);
  }
  patch<T = any>(path: string, body?: unknown, opts?: RequestOptions) { // eslint-disable-line @typescript-eslint/no-explicit-any
    return this.request<T>('PATCH', path, body, opts);
  }
  delete<T = any>(path: string, opts?: RequestOptions) { // eslint-disable-line @typescript-eslint/no-explicit-any
    return this.request<T>('DELETE', path, undefined, opts);
  }
}

/** A signed-up user's organization, its default environment and an API key of it. */
export interface Tenant {
  email: string;
  password: string;
  org_id: string;
  env_id: string;
  /** The API key (secret), bound to org_id and env_id. */
  key: string;
  /** A client acting with the API key. */
  api: ApiClient;
  /** The owner's session. */
  accessToken: string;
  refreshToken: string;
}

/** Signs a new user up (a new organization, its owner) and creates an API key; `email` is a new random one unless given. */
export async function signUpTenant(baseUrl: string, email = `t${randomBytes(6).toString('hex')}@example.com`): Promise<Tenant> {
  const password = 'correct horse battery';
  const anon = new ApiClient(baseUrl);
  const signup = await anon.post('/api/v1/auth/signup', { email, password });
  if (signup.status !== 201) throw new Error(`signup of ${email} answered ${signup.status}: ${signup.text}`);
  const created = await anon.post('/api/v1/keys', { name: 'agent' }, { token: signup.body.access_token });
  if (created.status !== 201) throw new Error(`API key creation answered ${created.status}: ${created.text}`);
  return {
    email,
    password,
    org_id: signup.body.organization.id,
    env_id: signup.body.organization.default_env_id,
    key: created.body.key,
    api: anon.withToken(created.body.key),
    accessToken: signup.body.access_token,
    refreshToken: signup.body.refresh_token,
  };
}

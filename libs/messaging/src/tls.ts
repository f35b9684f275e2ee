/**
 * When a bus connection uses TLS. nats.js ignores a server URL's scheme and upgrades to TLS
 * only when the server offers it: a `tls://` URL pointing at a server without TLS would be
 * accepted in plain text, credentials included. Passing a `tls` option (even empty, which
 * verifies against the system's CAs) makes the client refuse such a server.
 */
export interface BusTls {
  /** PEM CA the server's certificate must chain to; read again at every (re)connect, so a renewed file is picked up. */
  caFile?: string;
  /** Client certificate and key (PEM), for servers that verify clients. */
  certFile?: string;
  keyFile?: string;
}

/** nats.js's `tls` option for these servers: the files given, `{}` for a tls:// URL alone, none otherwise. */
export function busTlsOption(servers: string | string[], tls: BusTls | undefined): { tls?: BusTls } {
  if (tls) return { tls };
  const urls = Array.isArray(servers) ? servers : [servers];
  return urls.some((u) => /^\s*tls:\/\//i.test(u)) ? { tls: {} } : {};
}

/**
 * Every subject, stream, consumer and queue-group name goes through a Namespace, so
 * deployments and parallel test runs sharing one NATS server never see each other.
 * Empty prefix = the names of the catalog as they are.
 */
export class Namespace {
  constructor(readonly prefix: string = '') {
    if (!/^[a-z0-9_-]*$/i.test(prefix)) throw new Error(`invalid bus namespace: ${prefix}`);
  }

  subject(subject: string): string {
    return this.prefix ? `${this.prefix}.${subject}` : subject;
  }

  /** Removes the prefix from a subject received on the wire. */
  unprefix(subject: string): string {
    return this.prefix && subject.startsWith(`${this.prefix}.`) ? subject.slice(this.prefix.length + 1) : subject;
  }

  stream(name: string): string {
    return this.prefix ? `${this.prefix}_${name}` : name;
  }

  consumer(name: string): string {
    return this.prefix ? `${this.prefix}_${name}` : name;
  }

  queue(service: string): string {
    return this.prefix ? `${this.prefix}_${service}` : service;
  }
}

/** What organization exports need from outside the admin service (implemented in src/clients). */
import type { ExportFile, ExportPage, ExportService, UserProfile } from '@mailroom/contracts';

/** Whether the organization exists (orgs). */
export interface Organizations {
  exists(orgId: string): Promise<boolean>;
}

/** Each service's rows of an organization, a page at a time (`<service>.export.page`). */
export interface ExportSources {
  page(service: ExportService, resource: string, orgId: string, pageToken: string | undefined): Promise<ExportPage>;
  /** Names and emails of people by id (auth), at most 100 at once; unknown ids left out. */
  profiles(userIds: string[]): Promise<UserProfile[]>;
}

/** The stored bytes a file of the archive comes from (raw messages, attachments); null when missing. */
export interface StoredFiles {
  open(file: ExportFile): Promise<AsyncIterable<Uint8Array> | null>;
}

/** One archive being written to the object store, entry after entry. */
export interface ArchiveWriter {
  /** Adds an entry; resolves once its content was read to the end (one entry in flight at a time). */
  add(path: string, content: AsyncIterable<Uint8Array>): Promise<void>;
  /** Bytes of the archive written so far. */
  readonly bytes: number;
  /** Closes the archive and waits until it is stored; its size in bytes. */
  finish(): Promise<number>;
  /** Stops writing: nothing is stored. */
  abort(reason: Error): void;
}

export interface Archives {
  create(name: string, mtime: Date): ArchiveWriter;
  delete(name: string): Promise<void>;
}

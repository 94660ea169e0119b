/**
 * Writing the objects of one operation together. An `ObjectBatch` (`ObjectDatabase.batch()`)
 * gathers them and stores them when flushed: as one pack and its idx when there are
 * `packThreshold` or more, else as loose objects written several at a time.
 * Creating a file in the objects directory is the dear part of writing a small object; a pack is
 * two files whatever the count (git's `fetch.unpackLimit` makes the same trade, at 100).
 */
import type { ObjectType } from '../object/loose.js';

/** What writes objects: the database itself (each object at once) or an `ObjectBatch` (at its flush). */
export interface ObjectWriter {
  /** The object's id; the object exists once the writer is done (for a batch: after its flush). */
  write(type: ObjectType, content: Uint8Array): Promise<string>;
  /** True when the object exists or this writer will write it. */
  has(oid: string): Promise<boolean>;
  /** Which of `oids` has() would answer true for (lower-case ids), asked all at once. */
  existing(oids: readonly string[]): Promise<Set<string>>;
}

/** An object on its way into the database, its id already computed. */
export interface NewObject {
  oid: string;
  type: ObjectType;
  content: Uint8Array;
}

/**
 * What a batch asks of the object database (the `ObjectDatabase` that makes batches implements
 * it), so the batch names only the part it uses.
 */
export interface BatchTarget {
  /** Content held before a batch flushes by itself. */
  readonly batchBytes: number;
  idOf(type: ObjectType, content: Uint8Array): string;
  exists(oid: string): Promise<boolean>;
  has(oid: string): Promise<boolean>;
  existing(oids: readonly string[]): Promise<Set<string>>;
  /** Stores objects; `checked`: each was found absent already. */
  writeNew(objects: readonly NewObject[], opts?: { checked?: boolean }): Promise<void>;
}

/**
 * The objects one operation writes, stored together: `write` computes the id and keeps the
 * content; `flush` stores what is new (`ObjectDatabase.writeNew`: one pack, or a few loose
 * objects). A batch flushes by itself once it holds `batchBytes` of content, so memory stays
 * bounded however much is captured. Until the final `flush` has returned, ids it handed out may
 * name objects that are not on disk yet: refer to them (move a ref) only after it.
 */
export class ObjectBatch implements ObjectWriter {
  private pending: NewObject[] = [];
  private pendingBytes = 0;
  /** Every id handed out: pending, flushed, or found to exist. */
  private readonly seen = new Set<string>();
  /** Ids whose existence check is under way. */
  private readonly checking = new Map<string, Promise<void>>();
  /** Flushes run one after the other. */
  private queue: Promise<void> = Promise.resolve();
  private failure: { e: unknown } | undefined;

  constructor(readonly odb: BatchTarget) {}

  async write(type: ObjectType, content: Uint8Array): Promise<string> {
    const oid = this.odb.idOf(type, content);
    if (this.seen.has(oid)) {
      // the same object, written concurrently: done when that write is, and failed if it fails
      await this.checking.get(oid);
      return oid;
    }
    this.seen.add(oid);
    const check = this.odb.exists(oid).then((exists) => {
      if (exists) return;
      this.pending.push({ oid, type, content });
      this.pendingBytes += content.length;
    });
    this.checking.set(oid, check);
    try {
      await check;
    } catch (e) {
      // not queued: a retry must not take the id for written
      this.seen.delete(oid);
      throw e;
    } finally {
      this.checking.delete(oid);
    }
    if (this.pendingBytes >= this.odb.batchBytes) await this.flush();
    return oid;
  }

  /**
   * The batch is what an operation knows about objects: found to exist or handed out, an id is
   * not looked up again while the batch lives. A database-wide cache would outlive the operation,
   * and between two operations a `git gc --prune=now` may delete objects that were unreachable.
   */
  async has(oid: string): Promise<boolean> {
    const id = oid.toLowerCase();
    if (this.seen.has(id)) return true;
    const found = await this.odb.has(id);
    if (found) this.seen.add(id);
    return found;
  }

  async existing(oids: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    const ask: string[] = [];
    for (const oid of oids) {
      const id = oid.toLowerCase();
      if (this.seen.has(id)) found.add(id);
      else ask.push(oid);
    }
    if (ask.length > 0) {
      for (const id of await this.odb.existing(ask)) {
        this.seen.add(id);
        found.add(id);
      }
    }
    return found;
  }

  /** Objects waiting for the next flush. */
  get size(): number {
    return this.pending.length;
  }

  /** Stores every pending object; throws the failure of this or any earlier flush of the batch. */
  flush(): Promise<void> {
    const items = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const run = this.queue.then(async () => {
      if (this.failure || items.length === 0) return;
      try {
        // each was found absent when it was queued (and ids are unique within the batch)
        await this.odb.writeNew(items, { checked: true });
      } catch (e) {
        this.failure ??= { e };
      }
    });
    this.queue = run;
    return run.then(() => {
      if (this.failure) throw this.failure.e;
    });
  }
}

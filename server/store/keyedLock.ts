// Serialises async critical sections per key within this process. FerretDB v1
// applies updates as read-modify-write without atomicity, so counters that
// must be exact are updated under this lock (MongoDB's operators make them
// exact across processes too).
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Runs `fn` holding every key's lock, taken in the given order (callers sort, so that none waits in a cycle). */
  runAll<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    const [first, ...rest] = keys;
    return first === undefined ? fn() : this.run(first, () => this.runAll(rest, fn));
  }
}

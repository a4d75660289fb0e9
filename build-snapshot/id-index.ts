// A set of record ids with the line each was first seen on, packed into typed arrays (the duplicate-id check).
//
// A Map<string, number> of 1,000,000 listing ids held ~80 MB in the parser thread (a string object, a map
// entry and slack per id). Ids are short ASCII (source-schema.ts: A-Z a-z 0-9 . _ : -), so this keeps their
// bytes in one arena, with an offset and a line number per id and an open-addressing hash table of slots:
// about 30 bytes an id.

export class IdIndex {
  private bytes = new Uint8Array(1 << 16);
  private used = 0;
  private starts = new Uint32Array(1 << 12); // id k occupies bytes[starts[k], starts[k + 1])
  private lines = new Uint32Array(1 << 12);
  private count = 0;
  private slots = new Int32Array(1 << 13).fill(-1); // id number or -1; capacity stays at least 2 × count

  get size(): number {
    return this.count;
  }

  /** The line `id` was first seen on; undefined (and `id` is recorded at `line`) when it is new. */
  firstLine(id: string, line: number): number | undefined {
    const mask = this.slots.length - 1;
    for (let s = hash(id) & mask; ; s = (s + 1) & mask) {
      const k = this.slots[s];
      if (k === -1) {
        this.insert(s, id, line);
        return undefined;
      }
      if (this.equals(k, id)) return this.lines[k];
    }
  }

  private equals(k: number, id: string): boolean {
    const start = this.starts[k];
    if (this.starts[k + 1] - start !== id.length) return false;
    for (let i = 0; i < id.length; i++) if (this.bytes[start + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  private insert(slot: number, id: string, line: number): void {
    for (let i = 0; i < id.length; i++)
      if (id.charCodeAt(i) > 0x7f) throw new Error(`IdIndex holds ASCII ids only (got ${JSON.stringify(id)})`);
    const k = this.count++;
    if (this.count + 1 > this.starts.length) {
      this.starts = grow(this.starts, this.starts.length * 2);
      this.lines = grow(this.lines, this.lines.length * 2);
    }
    if (this.used + id.length > this.bytes.length)
      this.bytes = grow(this.bytes, Math.max(this.bytes.length * 2, this.used + id.length));
    for (let i = 0; i < id.length; i++) this.bytes[this.used + i] = id.charCodeAt(i);
    this.starts[k] = this.used;
    this.used += id.length;
    this.starts[k + 1] = this.used;
    this.lines[k] = line;
    this.slots[slot] = k;
    if (this.count * 2 > this.slots.length) this.rehash(this.slots.length * 2);
  }

  private rehash(capacity: number): void {
    const slots = new Int32Array(capacity).fill(-1);
    const mask = capacity - 1;
    for (let k = 0; k < this.count; k++) {
      let s = hashBytes(this.bytes, this.starts[k], this.starts[k + 1]) & mask;
      while (slots[s] !== -1) s = (s + 1) & mask;
      slots[s] = k;
    }
    this.slots = slots;
  }
}

function grow<T extends Uint8Array | Uint32Array>(a: T, length: number): T {
  const b = new (a.constructor as new (n: number) => T)(length);
  b.set(a);
  return b;
}

/** FNV-1a over the characters (ASCII: the same as over the stored bytes). */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
function hashBytes(b: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ b[i], 0x01000193);
  return h >>> 0;
}

/**
 * One copy of each string from a small set of values that every cached object repeats (field
 * managers, operations, subresources, API versions of owners): JSON.parse makes a fresh copy of
 * every value longer than a few characters, so without this each cached object holds its own. The
 * set is bounded: past `limit` distinct values (clients naming their field manager at random, say)
 * new ones are passed through as they came, never kept here.
 */
export class Interner {
  private readonly values = new Map<string, string>();

  constructor(private readonly limit = 1000) {}

  /** How many distinct values are kept. */
  get size(): number {
    return this.values.size;
  }

  intern<T extends string | undefined>(value: T): T {
    if (value === undefined) return value;
    const known = this.values.get(value);
    if (known !== undefined) return known as T;
    if (this.values.size < this.limit) this.values.set(value, value);
    return value;
  }
}

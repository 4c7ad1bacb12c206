// How error messages show the values they reject: every TypeError and RangeError of the library names the
// offending value through this one function, so messages read the same across the API.

export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return `function ${value.name || '(anonymous)'}`;
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  if (value !== null && typeof value === 'object') return `an object (${value.constructor?.name ?? 'null prototype'})`;
  return String(value);
}

/**
 * Throws the library's TypeError, naming the index and the value, for an item of `texts` not a string or bytes,
 * or bytes whose buffer was detached (else the engine's own error, naming neither, comes from deep in a pass).
 */
export function checkTextItems(texts: readonly unknown[]): void {
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i];
    if (typeof t !== 'string' && !(t instanceof Uint8Array))
      throw new TypeError(`texts[${i}] must be a string or a Uint8Array, got ${show(t)}`);
    if (typeof t !== 'string' && t.byteLength === 0) checkAttached(t, `texts[${i}]`);
  }
}

/** The error for any object used after its free(): one TypeError, naming the object, across the API. */
export function freedError(what: string): TypeError {
  return new TypeError(`${what} was used after free(); create a new one`);
}

/** Throws the library's TypeError when `view`'s buffer was detached (transferred, or a memory that grew). */
export function checkAttached(view: ArrayBufferView, name: string): void {
  // A detached buffer reads as length 0; Node 20 lacks ArrayBuffer.prototype.detached, so construct to tell.
  if (view.byteLength !== 0 || view.buffer.byteLength !== 0) return;
  try {
    new Uint8Array(view.buffer);
  } catch {
    throw new TypeError(`${name} is a view of a detached ArrayBuffer (transferred or resized away)`);
  }
}

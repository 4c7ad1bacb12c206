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

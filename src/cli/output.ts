// Helpers for what the command line prints.

/** The start of a document on one line, for the summary. */
export function snippet(text: string | Uint8Array): string {
  const t = (typeof text === 'string' ? text : new TextDecoder().decode(text.subarray(0, 400)))
    .replace(/\s+/g, ' ')
    .trim();
  return t.length > 90 ? `${t.slice(0, 90)}…` : t;
}

export function csvField(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export async function write(text: string): Promise<void> {
  if (text === '') return;
  await new Promise<void>((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

export function ms(x: number): string {
  return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`;
}

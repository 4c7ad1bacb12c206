// The JSON Lines field reader (assembly/json-field.ts) against JSON.parse and TextEncoder, the reference it stands in
// for: a record it settles must give exactly encodeInto(JSON.parse(line)[field]) and the id JSON.stringify gives,
// and a plain record (well-formed text, keys without escapes) must be settled, not left to JSON.parse.
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ID_NONE, ID_PARSE, ID_PLAIN, readJsonFields } from '../../src/runtime/json-field.js';

const encoder = new TextEncoder();

interface Read {
  settled: boolean;
  text?: Uint8Array;
  kind?: number;
  token?: string;
}

/** Reads lines as the CLI does: one buffer, lines separated by newlines. */
function readAll(lines: readonly Uint8Array[], field = 'text', idField = 'id'): Read[] {
  const total = lines.reduce((s, l) => s + l.length + 1, 0);
  const bytes = Buffer.alloc(total);
  const bounds = new Uint32Array(2 * lines.length);
  let at = 0;
  lines.forEach((l, q) => {
    bytes.set(l, at);
    bounds[2 * q] = at;
    bounds[2 * q + 1] = at + l.length;
    at += l.length;
    bytes[at++] = 10;
  });
  const before = Buffer.from(bytes);
  // Lines the caller has checked to be well-formed UTF-8 take the kernel's faster path: it must read them the same.
  const checked = isUtf8(bytes) ? Buffer.from(bytes) : null;
  const r = readJsonFields(bytes, bounds, lines.length, field, idField);
  if (checked) {
    const fast = readJsonFields(checked, bounds, lines.length, field, idField, true);
    expect(checked).toEqual(bytes);
    expect(fast.idKinds).toEqual(r.idKinds);
    expect(fast.idTokens).toEqual(r.idTokens);
    expect(fast.texts.map((t) => t && t.byteOffset - checked.byteOffset)).toEqual(
      r.texts.map((t) => t && t.byteOffset - bytes.byteOffset),
    );
  }
  return lines.map((l, q) => {
    const text = r.texts[q];
    const [start, end] = [bounds[2 * q]!, bounds[2 * q + 1]!];
    if (!text) {
      // A line left to JSON.parse keeps its bytes; a settled one begins with its text, the rest as it was.
      expect(bytes.subarray(start, end)).toEqual(Buffer.from(l));
      return { settled: false };
    }
    expect(text.byteOffset - bytes.byteOffset).toBe(start);
    expect(bytes.subarray(start + text.length, end + 1)).toEqual(before.subarray(start + text.length, end + 1));
    return { settled: true, text: new Uint8Array(text), kind: r.idKinds[q], token: r.idTokens[q] ?? '' };
  });
}

function wellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** What JSON.parse says of a line: the record, or undefined when it is not a JSON object. */
function parsed(line: Uint8Array): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(Buffer.from(line).toString('utf8')) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A settled line must agree with JSON.parse: its text, and its id as the CLI notes it. */
function agrees(line: Uint8Array, got: Read, field = 'text', idField = 'id'): void {
  if (!got.settled) return;
  const record = parsed(line);
  expect(record, Buffer.from(line).toString()).toBeDefined();
  expect(isUtf8(line)).toBe(true);
  const text = record![field];
  expect(typeof text).toBe('string');
  expect(Object.hasOwn(record!, field)).toBe(true);
  expect(wellFormed(text as string)).toBe(true);
  expect(got.text).toEqual(encoder.encode(text as string));
  const id = Object.hasOwn(record!, idField) ? record![idField] : undefined;
  const noted = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if (got.kind === ID_NONE)
    expect(id === undefined || id === null || typeof id === 'object' || typeof id === 'boolean').toBe(true);
  else if (got.kind === ID_PLAIN) {
    expect(typeof id).toBe('string');
    expect(got.token).toBe(JSON.stringify(id));
  } else {
    expect(got.kind).toBe(ID_PARSE);
    expect(JSON.parse(got.token!)).toBe(id);
  }
  // Nothing the CLI would note is lost: a string or finite number id always comes back.
  if (noted) expect(got.kind).not.toBe(ID_NONE);
}

const line = (s: string): Uint8Array => encoder.encode(s);
const raw = (...parts: Array<string | number[]>): Uint8Array =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

describe('readJsonFields', () => {
  it('settles plain records with the bytes of their text and their id', () => {
    const cases: Array<[string, string, number, string?]> = [
      ['{"text":"a"}', 'a', ID_NONE],
      ['\t{ "id" : "x-1" , "text" : "two words" }\r', 'two words', ID_PLAIN, '"x-1"'],
      ['{"id":7,"text":""}', '', ID_PARSE, '7'],
      ['{"id":-1.5e+3,"text":"n"}', 'n', ID_PARSE, '-1.5e+3'],
      ['{"id":"a\\"b","text":"q"}', 'q', ID_PARSE, '"a\\"b"'],
      ['{"id":{"n":1},"text":"o"}', 'o', ID_NONE],
      ['{"id":[1],"id":null,"text":"o"}', 'o', ID_NONE],
      ['{"id":"x","id":{"n":1},"text":"o"}', 'o', ID_NONE],
      ['{"id":"x","id":[1],"text":"o"}', 'o', ID_NONE],
      ['{"id":"x","id":null,"text":"o"}', 'o', ID_NONE],
      ['{"id":true,"text":"o","id":"last"}', 'o', ID_PLAIN, '"last"'],
      ['{"text":"first","text":"last"}', 'last', ID_NONE],
      [
        '{"meta":{"text":"inner","id":2},"text":"outer","x":[1,{"a":[]},"s",-0,0.25,1E5,true,false,null]}',
        'outer',
        ID_NONE,
      ],
      [
        '{"text":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude00\\u0000"}',
        '"\\/\b\f\n\r\t\u00e9\u20ac\u{1f600}\0',
        ID_NONE,
      ],
      ['{"text":"caf\u00e9 \u20ac \u{1f600} \u007f"}', 'caf\u00e9 \u20ac \u{1f600} \u007f', ID_NONE],
      [
        '{"other":"\\ud800","text":"lone surrogates elsewhere are fine"}',
        'lone surrogates elsewhere are fine',
        ID_NONE,
      ],
    ];
    const got = readAll(cases.map(([l]) => line(l)));
    cases.forEach(([l, text, kind, token], q) => {
      expect(got[q]!.settled, l).toBe(true);
      expect(Buffer.from(got[q]!.text!).toString(), l).toBe(text);
      expect(got[q]!.kind, l).toBe(kind);
      if (token !== undefined) expect(got[q]!.token, l).toBe(token);
      agrees(line(l), got[q]!);
    });
  });

  it('leaves to JSON.parse what it does not settle exactly', () => {
    const cases: Uint8Array[] = [
      // Not JSON.
      ...[
        '{"text":"a",}',
        '{"text":"a"} x',
        '{"text":"a"',
        '{"text" "a"}',
        "{'text':'a'}",
        '{"text":"a\\x"}',
        '{"text":"a\\u12G4"}',
        '{"text":"a","n":01}',
        '{"text":"a","n":1.}',
        '{"text":"a","n":.5}',
        '{"text":"a","n":+1}',
        '{"text":"a","n":1e}',
        '{"text":"a","n":-}',
        '{"text":"a","n":tru}',
        '{"text":"a","n":True}',
        '{"text":"a","n":[1,]}',
        '{"text":"a","n":[1 2]}',
        '{"text":"a"]',
        '\u000b{"text":"a"}',
        '',
      ].map(line),
      raw('{"text":"a', [0x01], '"}'),
      // Not an object, or no string at the field.
      ...[
        '[{"text":"a"}]',
        '"text"',
        '{"body":"a"}',
        '{"text":1}',
        '{"text":"a","text":null}',
        '{"meta":{"text":"a"}}',
      ].map(line),
      // JSON, but not settled here: escapes in a top-level key, a lone surrogate in the text, bytes that are not UTF-8.
      ...[
        '{"te\\u0078t":"a"}',
        '{"text":"a","te\\u0078t":"b"}',
        '{"text":"\\ud800"}',
        '{"text":"\\udc00x"}',
        '{"text":"\\ud83d\\u0041"}',
      ].map(line),
      raw('{"text":"', [0xff], '"}'),
      raw('{"text":"', [0xc0, 0xaf], '"}'),
      raw('{"text":"', [0xe0, 0x80, 0xaf], '"}'),
      raw('{"text":"', [0xed, 0xa0, 0x80], '"}'),
      raw('{"text":"', [0xf4, 0x90, 0x80, 0x80], '"}'),
      raw('{"text":"', [0xc3], '"}'),
      raw('{"text":"x","y":"', [0xe2, 0x82], '"}'),
      // Deeper than the kernel follows (JSON.parse reads it).
      line(`{"text":"a","deep":${'['.repeat(2000)}${']'.repeat(2000)}}`),
    ];
    const got = readAll(cases);
    cases.forEach((c, q) => expect(got[q]!.settled, Buffer.from(c).toString()).toBe(false));
    // The last four-byte sequence still settles.
    const top = raw('{"text":"', [0xf4, 0x8f, 0xbf, 0xbf], '"}');
    expect(readAll([top])[0]!.text).toEqual(new Uint8Array([0xf4, 0x8f, 0xbf, 0xbf]));
  });

  it('reads another field and id by name, and none when the id field is empty', () => {
    const l = line('{"body":"b","text":"t","key":"k","id":"i"}');
    const [r] = readAll([l], 'body', 'key');
    expect(Buffer.from(r!.text!).toString()).toBe('b');
    expect(r!.token).toBe('"k"');
    expect(readAll([l], 'text', '')[0]!.kind).toBe(ID_NONE);
  });

  const key = fc.constantFrom('text', 'id', 'body', 'meta', 'tex', 'textx', 'ID', 'é', '');
  const scalar = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 80 }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
  );
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      scalar,
      fc.array(tie('v'), { maxLength: 3 }),
      fc.dictionary(key, tie('v'), { maxKeys: 3 }),
    ),
  })).v;
  const record = fc.tuple(
    fc.array(fc.tuple(key, value), { maxLength: 5 }),
    fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 400 })),
    fc.nat(5),
    fc.constantFrom('', ' ', '\t', ' \r\n '),
  );

  /** A record as JSON text, the text field put among the others at `at`, with white space between tokens. */
  function render([fields, text, at, space]: [Array<[string, unknown]>, string, number, string]): string {
    const parts = fields.map(([k, v]) => `${JSON.stringify(k)}${space}:${space}${JSON.stringify(v)}`);
    parts.splice(Math.min(at, parts.length), 0, `"text":${space}${JSON.stringify(text)}`);
    return `${space}{${space}${parts.join(`${space},${space}`)}${space}}${space}`;
  }

  it('settles every generated record exactly when its text is well-formed (property)', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 20 }), (records) => {
        const lines = records.map((r) => line(render(r)));
        const got = readAll(lines);
        lines.forEach((l, q) => {
          const text = parsed(l)!.text;
          expect(got[q]!.settled).toBe(typeof text === 'string' && wellFormed(text));
          agrees(l, got[q]!);
        });
      }),
      { seed: 0x1503, numRuns: 300 },
    );
  });

  it('never settles a record otherwise than JSON.parse reads it, however its bytes are broken (property)', () => {
    const alphabet = [...'"{}[],:\\ u0123456789abcdefE.+-tnl'].map((c) => c.charCodeAt(0));
    const bytes = fc.oneof(
      fc.constantFrom(...alphabet),
      fc.constantFrom(
        0x00,
        0x09,
        0x0a,
        0x0b,
        0x1f,
        0x7f,
        0x80,
        0xbf,
        0xc0,
        0xc3,
        0xa9,
        0xe0,
        0xed,
        0xa0,
        0xf0,
        0xf4,
        0x90,
        0xff,
      ),
    );
    const edit = fc.tuple(fc.nat(), fc.constantFrom('insert', 'delete', 'replace'), bytes);
    fc.assert(
      fc.property(record, fc.array(edit, { minLength: 1, maxLength: 4 }), (r, edits) => {
        const l = Array.from(line(render(r)));
        for (const [at, op, b] of edits) {
          const i = l.length === 0 ? 0 : at % (l.length + (op === 'insert' ? 1 : 0));
          if (op === 'insert') l.splice(i, 0, b);
          else if (l.length > 0) l.splice(i, 1, ...(op === 'replace' ? [b] : []));
        }
        const edited = new Uint8Array(l.filter((b) => b !== 0x0a));
        agrees(edited, readAll([edited])[0]!);
      }),
      { seed: 0x1504, numRuns: 3000 },
    );
  });

  it('reads lines whose texts run past 16 bytes with escapes and non-ASCII at every offset', () => {
    const pieces = ['\\n', '\\"', '\\u00e9', '\u00e9', '\u20ac', '\u{1f600}', '\\ud83d\\ude00', '\\\\', '\\t'];
    const lines: Uint8Array[] = [];
    const texts: string[] = [];
    for (let pad = 0; pad < 34; pad++)
      for (const piece of pieces) {
        const l = `{"text":"${'x'.repeat(pad)}${piece}${'y'.repeat(33 - pad)}"}`;
        lines.push(line(l));
        texts.push(JSON.parse(l).text);
      }
    const got = readAll(lines);
    got.forEach((g, q) => expect(g.text).toEqual(encoder.encode(texts[q]!)));
  });
});

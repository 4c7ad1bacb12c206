// JSON Lines records read for one string field (src/io/json-field.ts): each line is validated as JSON.parse would
// (ECMA-404: the grammar, strings of well-formed UTF-8 without raw control characters, any nesting), and the last
// value of the top-level key `field` is unescaped to UTF-8. Anything this kernel does not settle exactly is left to
// JSON.parse in JavaScript (FALLBACK): invalid JSON, a top level that is not an object, the field missing or not a
// string, a top-level key with escapes, a lone surrogate in the field (encodeInto would write U+FFFD for it, which a
// string-reading preset would not see), nesting beyond the stack. So a record settled here gives the bytes that
// encodeInto(JSON.parse(line)[field]) gives, and every other record goes the way it always went.

/** Per line, five u32 at `out`: status, the text's start in `dst` and its length, the id's start in the line and its length. */
const FIELD_OUT_WORDS: i32 = 5;
const OK: u32 = 0;
const FALLBACK: u32 = 1;
/** The id's kind, in the status word's upper half: none, a string token without escapes, or a token to JSON.parse. */
const ID_NONE: u32 = 0;
const ID_PLAIN: u32 = 1;
const ID_PARSE: u32 = 2;

const S_VALUE = 0;
const S_KEY = 1;
const S_AFTER = 2;

// What scanString found: whether the string had escapes, and where its unescaped bytes ended.
let hadEscape = false;
let written: usize = 0;
// Set by jsonFields when the caller has checked that the lines are well-formed UTF-8 (Node's buffer.isUtf8, at
// tens of GB/s): bytes above 0x7f then need no check and stay in the fast runs. Text with accents or another
// script has one every few bytes, and each one left the runs for utf8Length.
let utf8Known = false;

@inline function isSpace(c: u32): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}

function skipSpace(p: usize, end: usize): usize {
  while (p < end && isSpace(<u32>load<u8>(p))) p++;
  return p;
}

@inline function hex(c: u32): i32 {
  if (c - 0x30 < 10) return <i32>(c - 0x30);
  let l = c | 0x20;
  if (l - 0x61 < 6) return <i32>(l - 0x61 + 10);
  return -1;
}

/** The code unit of the four hex digits at p, or -1. */
function hex4(p: usize): i32 {
  let a = hex(load<u8>(p)), b = hex(load<u8>(p, 1)), c = hex(load<u8>(p, 2)), d = hex(load<u8>(p, 3));
  if ((a | b | c | d) < 0) return -1;
  return (a << 12) | (b << 8) | (c << 4) | d;
}

/** Length of the well-formed UTF-8 sequence at p (lead byte c ≥ 0x80), or 0 (the WHATWG decoder would substitute). */
function utf8Length(p: usize, end: usize, c: u32): usize {
  if (c < 0xc2) return 0;
  if (c < 0xe0) return p + 1 < end && (<u32>load<u8>(p, 1) & 0xc0) == 0x80 ? 2 : 0;
  if (c < 0xf0) {
    if (p + 2 >= end) return 0;
    let c1 = <u32>load<u8>(p, 1);
    if ((c1 & 0xc0) != 0x80 || (c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0)) return 0;
    return (<u32>load<u8>(p, 2) & 0xc0) == 0x80 ? 3 : 0;
  }
  if (c < 0xf5) {
    if (p + 3 >= end) return 0;
    let c1 = <u32>load<u8>(p, 1);
    if ((c1 & 0xc0) != 0x80 || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90)) return 0;
    return (<u32>load<u8>(p, 2) & 0xc0) == 0x80 && (<u32>load<u8>(p, 3) & 0xc0) == 0x80 ? 4 : 0;
  }
  return 0;
}

const ONES: u64 = 0x0101010101010101;
const HIGHS: u64 = 0x8080808080808080;

/**
 * Non-zero when one of x's bytes is '"', '\\', below 0x20 or (where `high` has the byte's high bit) above 0x7f:
 * each test sets its bytes' high bit.
 */
@inline function plainBytes(x: u64, high: u64): u64 {
  let quote = x ^ (ONES * 0x22);
  let slash = x ^ (ONES * 0x5c);
  let control = ~((x | HIGHS) - ONES * 0x20) & ~x;
  return (((quote - ONES) & ~quote) | ((slash - ONES) & ~slash) | control | (x & high)) & HIGHS;
}

/**
 * The string whose opening quote is at p: the position after its closing quote, or 0 when it is not valid (or
 * holds what FALLBACK leaves to JavaScript, when writing). With w ≠ 0 its UTF-8 is written from w (`written` ends it).
 */
function scanString(p: usize, end: usize, w: usize): usize {
  p++;
  hadEscape = false;
  let high: u64 = utf8Known ? 0 : HIGHS;
  while (p < end) {
    // Runs of bytes that are none of a quote, a backslash, a control character or non-ASCII: 16 at a time (up to
    // 16 bytes are stored past the run: dst has that slack), or 8 in the scalar build.
    if (ASC_FEATURE_SIMD) {
      let highs = i8x16.splat(utf8Known ? 0 : -128);
      while (p + 16 <= end) {
        let v = v128.load(p);
        let special = v128.or(
          v128.or(i8x16.eq(v, i8x16.splat(0x22)), i8x16.eq(v, i8x16.splat(0x5c))),
          v128.or(i8x16.lt_u(v, i8x16.splat(0x20)), v128.and(v, highs)),
        );
        let m = i8x16.bitmask(special);
        if (w) v128.store(w, v);
        let n: usize = m == 0 ? 16 : <usize>ctz(m);
        p += n;
        if (w) w += n;
        if (m != 0) break;
      }
    } else {
      while (p + 8 <= end) {
        let x = load<u64>(p);
        if (plainBytes(x, high) != 0) break;
        if (w) {
          store<u64>(w, x);
          w += 8;
        }
        p += 8;
      }
    }
    if (p >= end) break;
    let c = <u32>load<u8>(p);
    if (c == 0x22) {
      written = w;
      return p + 1;
    }
    if (c < 0x20) return 0;
    if ((c < 0x80 || utf8Known) && c != 0x5c) {
      if (w) store<u8>(w++, <u8>c);
      p++;
      continue;
    }
    if (c >= 0x80) {
      let n = utf8Length(p, end, c);
      if (n == 0) return 0;
      if (w) {
        // Four bytes moved whatever the length: the buffer has bytes beyond a line, dst 16 to spare.
        store<u32>(w, load<u32>(p));
        w += n;
      }
      p += n;
      continue;
    }
    // A backslash.
    hadEscape = true;
    if (p + 1 >= end) return 0;
    let e = <u32>load<u8>(p, 1);
    let v: i32 = -1;
    if (e == 0x22 || e == 0x5c || e == 0x2f) v = e;
    else if (e == 0x62) v = 0x08;
    else if (e == 0x66) v = 0x0c;
    else if (e == 0x6e) v = 0x0a;
    else if (e == 0x72) v = 0x0d;
    else if (e == 0x74) v = 0x09;
    if (v >= 0) {
      if (w) store<u8>(w++, <u8>v);
      p += 2;
      continue;
    }
    if (e != 0x75 || p + 6 > end) return 0;
    let u = hex4(p + 2);
    if (u < 0) return 0;
    p += 6;
    if (u >= 0xd800 && u < 0xe000) {
      // A surrogate: valid JSON alone, but written here only as half of a pair.
      if (u < 0xdc00 && p + 6 <= end && load<u8>(p) == 0x5c && load<u8>(p, 1) == 0x75) {
        let lo = hex4(p + 2);
        if (lo >= 0xdc00 && lo < 0xe000) {
          p += 6;
          if (w) {
            let cp = 0x10000 + (((u - 0xd800) << 10) | (lo - 0xdc00));
            store<u8>(w, <u8>(0xf0 | (cp >> 18)));
            store<u8>(w, <u8>(0x80 | ((cp >> 12) & 0x3f)), 1);
            store<u8>(w, <u8>(0x80 | ((cp >> 6) & 0x3f)), 2);
            store<u8>(w, <u8>(0x80 | (cp & 0x3f)), 3);
            w += 4;
          }
          continue;
        }
      }
      if (w) return 0;
      continue;
    }
    if (w) {
      if (u < 0x80) store<u8>(w++, <u8>u);
      else if (u < 0x800) {
        store<u8>(w, <u8>(0xc0 | (u >> 6)));
        store<u8>(w, <u8>(0x80 | (u & 0x3f)), 1);
        w += 2;
      } else {
        store<u8>(w, <u8>(0xe0 | (u >> 12)));
        store<u8>(w, <u8>(0x80 | ((u >> 6) & 0x3f)), 1);
        store<u8>(w, <u8>(0x80 | (u & 0x3f)), 2);
        w += 3;
      }
    }
  }
  return 0;
}

/** The number at p (a valid one's end), or 0. */
function scanNumber(p: usize, end: usize): usize {
  if (load<u8>(p) == 0x2d) p++;
  if (p >= end) return 0;
  let c = <u32>load<u8>(p);
  if (c == 0x30) p++;
  else if (c - 0x31 < 9) {
    p++;
    while (p < end && <u32>load<u8>(p) - 0x30 < 10) p++;
  } else return 0;
  if (p < end && load<u8>(p) == 0x2e) {
    p++;
    if (p >= end || <u32>load<u8>(p) - 0x30 >= 10) return 0;
    while (p < end && <u32>load<u8>(p) - 0x30 < 10) p++;
  }
  if (p < end && (<u32>load<u8>(p) | 0x20) == 0x65) {
    p++;
    if (p < end && (load<u8>(p) == 0x2b || load<u8>(p) == 0x2d)) p++;
    if (p >= end || <u32>load<u8>(p) - 0x30 >= 10) return 0;
    while (p < end && <u32>load<u8>(p) - 0x30 < 10) p++;
  }
  return p;
}

/** The literal at p (true, false, null: its end), or 0. */
function scanLiteral(p: usize, end: usize): usize {
  let c = <u32>load<u8>(p);
  if (c == 0x74 && p + 4 <= end && load<u32>(p) == 0x65757274) return p + 4; // "true"
  if (c == 0x6e && p + 4 <= end && load<u32>(p) == 0x6c6c756e) return p + 4; // "null"
  if (c == 0x66 && p + 5 <= end && load<u32>(p, 1) == 0x65736c61) return p + 5; // "false"
  return 0;
}

@inline function sameBytes(a: usize, b: usize, n: usize): bool {
  return memory.compare(a, b, n) == 0;
}

/**
 * Reads `count` lines (line q spans buf + lines[2q] .. buf + lines[2q + 1], u32) for the string at top-level key
 * `key` (keyLen bytes of UTF-8) and the value at `idKey` (idKeyLen; 0: none). The texts are written one after
 * another from `dst`; per line, FIELD_OUT_WORDS u32 go to `out`: status (OK or FALLBACK, the id's kind << 16), the
 * text's offset from dst and length, the id token's offset in its line and length. `stack` holds `depth` bytes of
 * nesting. `valid` (1 or 0): whether the lines are known to be well-formed UTF-8. Returns the bytes written to dst
 * (at most the lines' total: an unescaped string is never longer).
 */
export function jsonFields(
  buf: usize,
  lines: usize,
  count: i32,
  key: usize,
  keyLen: i32,
  idKey: usize,
  idKeyLen: i32,
  dst: usize,
  out: usize,
  stack: usize,
  depth: i32,
  valid: i32,
): usize {
  utf8Known = valid != 0;
  let w = dst;
  for (let q = 0; q < count; q++) {
    let start = buf + <usize>load<u32>(lines + (<usize>q << 3));
    let end = buf + <usize>load<u32>(lines + (<usize>q << 3), 4);
    let o = out + <usize>q * (<usize>FIELD_OUT_WORDS << 2);
    let status = readLine(start, end, key, <usize>keyLen, idKey, <usize>idKeyLen, w, stack, <usize>depth, o);
    store<u32>(o, status);
    if ((status & 0xffff) == OK) {
      store<u32>(o, <u32>(w - dst), 4);
      let len = load<u32>(o, 8);
      w += len;
    }
  }
  return w - dst;
}

/** One line (see jsonFields): its status; on OK the text is at w and its length in out[2], the id in out[3..4]. */
function readLine(
  p: usize,
  end: usize,
  key: usize,
  keyLen: usize,
  idKey: usize,
  idKeyLen: usize,
  w: usize,
  stack: usize,
  maxDepth: usize,
  o: usize,
): u32 {
  let first = p;
  p = skipSpace(p, end);
  if (p >= end || load<u8>(p) != 0x7b) return FALLBACK;
  let level: usize = 0;
  let state = S_VALUE;
  let hasText = false;
  let idKind = ID_NONE;
  // Which top-level key's value comes next: 1 the text's, 2 the id's, 0 neither.
  let target = 0;
  for (;;) {
    if (state == S_VALUE) {
      if (p >= end) return FALLBACK;
      let c = <u32>load<u8>(p);
      let here = p;
      if (c == 0x7b || c == 0x5b) {
        if (level == 1) {
          if (target == 1) hasText = false;
          else if (target == 2) idKind = ID_NONE;
        }
        if (level == maxDepth) return FALLBACK;
        store<u8>(stack + level, <u8>c);
        level++;
        p = skipSpace(p + 1, end);
        if (p < end && <u32>load<u8>(p) == c + 2) {
          // {} or []
          level--;
          p++;
          state = S_AFTER;
        } else state = c == 0x7b ? S_KEY : S_VALUE;
        target = 0;
        continue;
      }
      if (c == 0x22) {
        if (target == 1) {
          p = scanString(p, end, w);
          if (p == 0) return FALLBACK;
          hasText = true;
          store<u32>(o, <u32>(written - w), 8);
        } else {
          p = scanString(p, end, 0);
          if (p == 0) return FALLBACK;
          if (target == 2) idKind = hadEscape ? ID_PARSE : ID_PLAIN;
        }
      } else if (c == 0x2d || c - 0x30 < 10) {
        p = scanNumber(p, end);
        if (p == 0) return FALLBACK;
        if (target == 1) hasText = false;
        else if (target == 2) idKind = ID_PARSE;
      } else {
        p = scanLiteral(p, end);
        if (p == 0) return FALLBACK;
        if (target == 1) hasText = false;
        else if (target == 2) idKind = ID_NONE;
      }
      if (target == 2 && idKind != ID_NONE) {
        store<u32>(o, <u32>(here - first), 12);
        store<u32>(o, <u32>(p - here), 16);
      }
      target = 0;
      state = S_AFTER;
      continue;
    }
    if (state == S_KEY) {
      if (p >= end || load<u8>(p) != 0x22) return FALLBACK;
      let k = p + 1;
      p = scanString(p, end, 0);
      if (p == 0) return FALLBACK;
      let n = p - 1 - k;
      if (level == 1) {
        // Keys are compared as bytes: one written with escapes could name the field.
        if (hadEscape) return FALLBACK;
        if (n == keyLen && sameBytes(k, key, n)) target = 1;
        else if (idKeyLen != 0 && n == idKeyLen && sameBytes(k, idKey, n)) target = 2;
      }
      p = skipSpace(p, end);
      if (p >= end || load<u8>(p) != 0x3a) return FALLBACK;
      p = skipSpace(p + 1, end);
      state = S_VALUE;
      continue;
    }
    // S_AFTER: a value has ended.
    p = skipSpace(p, end);
    if (level == 0) {
      if (p != end || !hasText) return FALLBACK;
      return OK | (idKind << 16);
    }
    if (p >= end) return FALLBACK;
    let c = <u32>load<u8>(p);
    let open = <u32>load<u8>(stack + level - 1);
    if (c == 0x2c) {
      p = skipSpace(p + 1, end);
      state = open == 0x7b ? S_KEY : S_VALUE;
    } else if (c == open + 2) {
      level--;
      p++;
    } else return FALLBACK;
  }
  return FALLBACK; // not reached: the loop returns
}

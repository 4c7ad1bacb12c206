// A plain UTF-8 decoder following the WHATWG Encoding Standard's "UTF-8 decoder" algorithm: each maximal subpart
// of an ill-formed sequence becomes one U+FFFD (Unicode's "best practice", chapter 3, U+FFFD substitution of
// maximal subparts). Written from the standard, for the tests: the reference for bytes input.

/** Code points of the bytes, U+FFFD for each maximal subpart of an ill-formed sequence. */
export function decodeUtf8(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let needed = 0; // continuation bytes still expected
  let seen = 0;
  let cp = 0;
  let lower = 0x80; // the allowed range of the next continuation byte
  let upper = 0xbf;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (needed === 0) {
      if (b <= 0x7f) out.push(b);
      else if (b >= 0xc2 && b <= 0xdf) {
        needed = 1;
        cp = b & 0x1f;
      } else if (b >= 0xe0 && b <= 0xef) {
        if (b === 0xe0) lower = 0xa0; // no overlong 3-byte forms
        if (b === 0xed) upper = 0x9f; // no surrogates
        needed = 2;
        cp = b & 0x0f;
      } else if (b >= 0xf0 && b <= 0xf4) {
        if (b === 0xf0) lower = 0x90; // no overlong 4-byte forms
        if (b === 0xf4) upper = 0x8f; // nothing above U+10FFFF
        needed = 3;
        cp = b & 0x07;
      } else out.push(0xfffd); // 80..C1, F5..FF never start a sequence
      continue;
    }
    if (b < lower || b > upper) {
      // The sequence so far is a maximal subpart: one U+FFFD, and this byte starts afresh.
      out.push(0xfffd);
      needed = seen = cp = 0;
      lower = 0x80;
      upper = 0xbf;
      i--;
      continue;
    }
    lower = 0x80;
    upper = 0xbf;
    cp = (cp << 6) | (b & 0x3f);
    if (++seen === needed) {
      out.push(cp);
      needed = seen = cp = 0;
    }
  }
  if (needed !== 0) out.push(0xfffd); // truncated at the end
  return out;
}

export function decodeUtf8ToString(bytes: Uint8Array): string {
  return decodeUtf8(bytes)
    .map((cp) => String.fromCodePoint(cp))
    .join('');
}

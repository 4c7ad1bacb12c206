// The string id store: keys are reused, memory follows the live ids, Map chains grow and shrink, and delete()
// undoes insert() exactly. The model is a plain Map beside it.
import { describe, expect, it } from 'vitest';
import { StringIdStore } from '../../src/fingerprint-index/string-ids.js';
import { xorshiftRng } from '../reference.js';

describe('StringIdStore', () => {
  it('matches a Map model through random inserts and deletes, with tiny Maps (chains) and key reuse', () => {
    const r = xorshiftRng(99);
    const store = new StringIdStore(8);
    const model = new Map<string, number>();
    const used = new Set<number>();
    let most = 0;
    for (let step = 0; step < 20_000; step++) {
      const id = `s${Math.floor(r() * 600)}${r() < 0.1 ? '\uD800' : ''}`;
      if (model.has(id)) {
        expect(store.delete(id)).toBe(model.get(id));
        used.delete(model.get(id)!);
        model.delete(id);
      } else {
        const key = store.insert(id);
        expect(used.has(key)).toBe(false);
        used.add(key);
        model.set(id, key);
        most = Math.max(most, model.size);
      }
      if (step % 997 === 0) {
        for (const [s, key] of model) {
          expect(store.get(s)).toBe(key);
          expect(store.name(key)).toBe(s);
        }
      }
    }
    expect(store.size).toBe(model.size);
    // Keys are reused: they never spread beyond the most ids live at once.
    expect(store.slots).toBeLessThanOrEqual(most);
    const [present, key] = [...model][0]!;
    expect(store.insert(present)).toBe(-1);
    expect(store.get(present)).toBe(key);
    expect(store.size).toBe(model.size);
    expect(store.get('absent')).toBeUndefined();
    expect(store.delete('absent')).toBeUndefined();
  });

  it('slots and Maps stay flat over 10^6 insert/delete cycles, and drop to nothing when emptied', () => {
    const store = new StringIdStore(1000);
    for (let i = 0; i < 5000; i++) store.insert(`keep${i}`);
    const maps = store.maps;
    for (let i = 0; i < 1_000_000; i++) {
      store.insert(`c${i}`);
      store.delete(`c${i}`);
    }
    expect(store.slots).toBe(5000);
    expect(store.maps).toBe(maps);
    for (let i = 0; i < 5000; i++) store.delete(`keep${i}`);
    expect(store.slots).toBe(0);
    expect(store.maps).toBe(16); // one (empty) Map per shard
  });

  it('delete() in reverse order undoes a run of insert()s: the same ids get the same keys again', () => {
    const store = new StringIdStore(4);
    for (let i = 0; i < 100; i++) store.insert(`a${i}`);
    for (let i = 0; i < 100; i += 3) store.delete(`a${i}`);
    const batch = Array.from({ length: 50 }, (_, i) => `b${i}`);
    const keys = batch.map((s) => store.insert(s));
    for (let i = batch.length - 1; i >= 0; i--) store.delete(batch[i]!);
    expect(batch.map((s) => store.insert(s))).toEqual(keys);
  });
});

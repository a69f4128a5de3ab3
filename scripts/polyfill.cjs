// Langium >= 4.2.2 pulls chevrotain >= 12, which calls Object.groupBy (Node 22+).
// These machines and VS Code's extension host may run Node 20: define it when missing.
if (typeof Object.groupBy !== 'function') {
  Object.defineProperty(Object, 'groupBy', {
    configurable: true,
    writable: true,
    value: function groupBy(items, keyFn) {
      const out = Object.create(null);
      let i = 0;
      for (const item of items) {
        const key = keyFn(item, i++);
        (out[key] ??= []).push(item);
      }
      return out;
    },
  });
}
if (typeof Map.groupBy !== 'function') {
  Object.defineProperty(Map, 'groupBy', {
    configurable: true,
    writable: true,
    value: function groupBy(items, keyFn) {
      const out = new Map();
      let i = 0;
      for (const item of items) {
        const key = keyFn(item, i++);
        if (!out.has(key)) out.set(key, []);
        out.get(key).push(item);
      }
      return out;
    },
  });
}

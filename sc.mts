import { transform } from 'sucrase';
const gens: [string, (n: number) => string][] = [
  ['(<T>(', (n) => 'x = ' + '(<T>('.repeat(n)],
  ['<T>(', (n) => 'x = ' + '<T>('.repeat(n)],
  ['(<T>(a', (n) => 'x = ' + '(<T>(a'.repeat(n)],
  ['<T>(<T>', (n) => 'x = ' + '<T>() => '.repeat(n) + '<T>('],
  ['a ? (<T>(', (n) => 'x = ' + 'a ? (<T>('.repeat(n)],
];
for (const [name, g] of gens) {
  for (const n of [10, 14, 18, 22]) {
    const t = performance.now();
    try { transform(`(async () => {${g(n)}\n})`, { transforms: ['typescript'], disableESTransforms: true }); } catch {}
    const ms = performance.now() - t;
    console.log(name, n, ms.toFixed(1));
    if (ms > 1500) break;
  }
}

// Prints the Unicode data that tables.c turns into loader/tokenizer/hf_normalize_tables.h:
//   "assigned FIRST LAST" for each range of code points assigned in Unicode 9.0
//   (the version of the normalization tables in Hugging Face tokenizers'
//   `unicode-normalization-alignments` dependency), and "lower CP L..." for
//   each code point whose full lowercase mapping (Unicode 17.0, as Rust's
//   char::to_lowercase: UnicodeData's simple mapping, or SpecialCasing's
//   unconditional one) is not itself, and "space CP" for each White_Space
//   code point of Unicode 17.0 (Rust's char::is_whitespace). Numbers in hexadecimal.
const load = async (p) => (await import(`@unicode/unicode-${p}/code-points.mjs`)).default;
const unassigned = new Set(await load('9.0.0/General_Category/Unassigned'));
const hex = (c) => c.toString(16);
let out = '';
for (let c = 0; c < 0x110000;) {
  if (unassigned.has(c)) { c++; continue; }
  let d = c;
  while (d + 1 < 0x110000 && !unassigned.has(d + 1)) d++;
  out += `assigned ${hex(c)} ${hex(d)}\n`;
  c = d + 1;
}
const simple = await load('17.0.0/Simple_Case_Mapping/Lowercase');
const special = await load('17.0.0/Special_Casing/Lowercase');
const lower = new Map(simple);
for (const [c, to] of special) lower.set(c, to);
for (const c of [...lower.keys()].sort((a, b) => a - b)) {
  const to = [].concat(lower.get(c));
  if (to.length === 1 && to[0] === c) continue;
  out += `lower ${hex(c)} ${to.map(hex).join(' ')}\n`;
}
for (const c of await load("17.0.0/Binary_Property/White_Space")) out += `space ${hex(c)}\n`;
process.stdout.write(out);
